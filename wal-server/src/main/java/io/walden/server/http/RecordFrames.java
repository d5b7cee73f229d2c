package io.walden.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.walden.core.WalRecord;

import java.util.Locale;

/**
 * Records as binary frames instead of base64 JSON (docs/http-api.md, "Binary records"), for reads and streams whose
 * client sends {@code Accept: application/octet-stream}: each record is its LSN (8 bytes), its type (2 bytes) and
 * its payload's length (4 bytes), all big-endian, then the payload. No encoding on either side: a reader copies the
 * payload out of the log into the frame, and a client reads it as it is.
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
     * Whether the client asked for frames: its {@code Accept} names {@code application/octet-stream} (in any letter
     * case), without refusing it ({@code ;q=0}).
     */
    static boolean wanted(Exchange ex) {
        String accept = ex.request().headers().get(HttpHeaderNames.ACCEPT);
        if (accept == null) {
            return false;
        }
        for (String range : accept.toLowerCase(Locale.ROOT).split(",")) {
            String[] parts = range.trim().split(";");
            if (parts[0].trim().equals(MEDIA_TYPE)) {
                for (int i = 1; i < parts.length; i++) {
                    String p = parts[i].replace(" ", "");
                    if (p.startsWith("q=") && Double.parseDouble(p.substring(2)) == 0) {
                        return false;
                    }
                }
                return true;
            }
        }
        return false;
    }

    /** Appends {@code r}'s frame to {@code out}, copying the payload straight from the reader's view of it. */
    static void write(ByteBuf out, WalRecord r) {
        out.writeLong(r.lsn()).writeShort(r.type()).writeInt(r.size()).writeBytes(r.payloadView());
    }

    static int size(WalRecord r) {
        return HEADER_BYTES + r.size();
    }
}
