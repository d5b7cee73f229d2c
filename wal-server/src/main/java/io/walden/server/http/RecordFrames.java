package io.walden.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.walden.core.WalRecord;

import java.util.Locale;

/**
 * Records as binary frames instead of base64 JSON (docs/http-api.md, "Binary records"), for reads and streams whose
 * client sends {@code Accept: application/octet-stream}: each record is its LSN (8 bytes), its type (2 bytes) and
 * its payload's length (4 bytes), all big-endian, then the payload. No encoding on either side: a reader copies the
 * payload out of the log into the frame, and a client reads it as it is. A stream that cannot go on ends with an
 * error frame ({@link #writeError}).
 *
 * <pre>
 * +----------------+---------+------------+------------------+
 * | LSN (8 bytes)  | type (2)| length (4) | payload (length) |   a record
 * +----------------+---------+------------+------------------+
 * | FFFFFFFF FFFFFFFF | 0    | length (4) | Error JSON       |   an error frame, the stream's last
 * +-------------------+------+------------+------------------+
 * </pre>
 */
final class RecordFrames {
    static final String MEDIA_TYPE = "application/octet-stream";
    /** The header of {@code GET /v1/records}'s binary answer that says where to continue (the JSON's {@code next}). */
    static final String NEXT_HEADER = "Walden-Next";
    /** LSN, type, length. */
    static final int HEADER_BYTES = 8 + 2 + 4;

    private RecordFrames() {
    }

    /**
     * Whether to answer with frames: the client's {@code Accept} (media types in any letter case) ranks
     * {@code application/octet-stream} above the JSON answer ({@code jsonType}: application/json, or
     * application/x-ndjson for a stream), by quality (RFC 9110, 12.5.1), the most specific range deciding each type's.
     * On a tie JSON wins, being the default answer: a client that lists both without ranking them (as generated
     * clients do) gets JSON, and one that names only octet-stream gets frames. A malformed quality counts as 1.
     */
    static boolean wanted(Exchange ex, String jsonType) {
        return prefersFrames(ex.request().headers().get(HttpHeaderNames.ACCEPT), jsonType);
    }

    static boolean prefersFrames(String accept, String jsonType) {
        if (accept == null) {
            return false;
        }
        double frames = quality(accept, MEDIA_TYPE);
        return frames > 0 && frames > quality(accept, jsonType);
    }

    /** The quality {@code accept} gives {@code type}: its most specific matching range's, 0 when none matches. */
    static double quality(String accept, String type) {
        int best = -1; // 0: */*, 1: application/*, 2: the type itself
        double q = 0;
        for (String range : accept.toLowerCase(Locale.ROOT).split(",")) {
            String[] parts = range.trim().split(";");
            String name = parts[0].trim();
            int specificity = name.equals(type) ? 2 : name.equals(type.substring(0, type.indexOf('/')) + "/*") ? 1
                    : name.equals("*/*") ? 0 : -1;
            if (specificity > best) {
                best = specificity;
                q = qualityParameter(parts);
            }
        }
        return q;
    }

    private static double qualityParameter(String[] parts) {
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i].replace(" ", "");
            if (p.startsWith("q=")) {
                try {
                    return Double.parseDouble(p.substring(2));
                } catch (NumberFormatException malformed) {
                    return 1;
                }
            }
        }
        return 1;
    }

    /**
     * The LSN of an error frame, the last frame of a stream that could not go on: all ones, which no record has (an
     * LSN is a byte position, never negative).
     */
    static final long ERROR_LSN = -1L;

    /** Appends an error frame: {@link #ERROR_LSN}, type 0, then the {@code Error} object as JSON for its payload. */
    static void writeError(ByteBuf out, byte[] errorJson) {
        out.writeLong(ERROR_LSN).writeShort(0).writeInt(errorJson.length).writeBytes(errorJson);
    }

    /** Appends {@code r}'s frame to {@code out}, copying the payload straight from the reader's view of it. */
    static void write(ByteBuf out, WalRecord r) {
        out.writeLong(r.lsn()).writeShort(r.type()).writeInt(r.size()).writeBytes(r.payloadView());
    }

    static int size(WalRecord r) {
        return HEADER_BYTES + r.size();
    }
}
