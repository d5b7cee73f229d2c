package io.walden.server.http;

import io.walden.core.Compression;
import io.walden.core.Durability;
import io.walden.core.Lsn;
import io.walden.core.RecordTime;
import io.walden.core.Wal;
import io.walden.core.WalReader;

import java.time.Instant;

/**
 * The query parameters of the {@code /v1/records} endpoints (docs/http-api.md): each read with the log's default
 * when absent, and refused with a 400 {@code bad_parameter} that names it when it is wrong. The append parameters
 * are matched in place in the URI where they are plain, so that the hot path decodes and copies nothing.
 *
 * <p>Thread-safety: stateless beyond the log whose defaults it reads; called on event loops and reader threads.
 */
final class RecordParams {
    private static final Durability[] LEVELS = Durability.values();

    private final Wal wal;

    RecordParams(Wal wal) {
        this.wal = wal;
    }

    /** {@code ?durability=}, matched in place (no decoding, no copy) unless it is unusual; the log's default if absent. */
    Durability durability(Exchange ex) {
        long span = ex.paramSpan("durability");
        if (span < 0) {
            return wal.config().durability();
        }
        int start = (int) (span >>> 32);
        int length = (int) span - start;
        for (Durability d : LEVELS) {
            String name = d.configName();
            if (name.length() == length && ex.uri().regionMatches(true, start, name, 0, length)) {
                return d;
            }
        }
        return Durability.parse(ex.param("durability")); // decoded, or refused with the list of levels
    }

    /**
     * Refuses an append's malformed {@code ?durability=}, {@code ?type=} or {@code ?compression=} (400) before any log
     * is looked at: an append that creates its log ({@code --auto-create-logs}) creates nothing when refused.
     */
    static void checkAppend(Exchange ex) {
        if (ex.param("durability") != null) {
            Durability.parse(ex.param("durability"));
        }
        type(ex);
        if (ex.param("compression") != null) {
            Compression.parse(ex.param("compression"));
        }
    }

    /** {@code ?compression=} (none, lz4, zstd); the log's default if absent. */
    Compression compression(Exchange ex) {
        if (ex.paramSpan("compression") < 0) {
            return wal.config().compression();
        }
        return Compression.parse(ex.param("compression")); // or refused: 400 bad_parameter
    }

    /**
     * Where a read starts: {@code ?from=}, the LSN of cursor {@code ?cursor=} (404 when unknown), or the first record
     * at or after {@code ?from_time=} (RFC 3339; {@link Wal#lsnAt}); else {@code otherwise}.
     */
    long start(Exchange ex, long otherwise) {
        String from = ex.param("from");
        String cursor = ex.param("cursor");
        String fromTime = ex.param("from_time");
        if ((from != null ? 1 : 0) + (cursor != null ? 1 : 0) + (fromTime != null ? 1 : 0) > 1) {
            throw new IllegalArgumentException("give one of from, cursor and from_time");
        }
        return cursor != null ? wal.cursors().position(cursor) : from != null ? Lsn.parse(from)
                : fromTime != null ? wal.lsnAt(time(fromTime)) : otherwise;
    }

    /**
     * {@code ?from_time=} as decoded: RFC 3339 (or ISO 8601's {@code +0100} offsets), within what a record time holds,
     * else a 400 naming the parameter. A {@code +} sent as it is (the documented {@code ...+01:00} typed into curl)
     * arrives as a space, because a query string's {@code +} means a space (HTML forms); a time never holds a space,
     * so a space here can only be that {@code +}, and is read back as one: nothing that parsed before parses otherwise.
     */
    static Instant time(String fromTime) {
        try {
            return RecordTime.parse(fromTime.replace(' ', '+'));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("from_time: " + e.getMessage(), e);
        }
    }

    /** {@code ?type=} (0 to 65535), read in place when it is plain digits; 0 if absent. */
    static int type(Exchange ex) {
        long span = ex.paramSpan("type");
        if (span < 0) {
            return 0;
        }
        int start = (int) (span >>> 32);
        int end = (int) span;
        int value = 0;
        for (int i = start; i < end && end - start <= 5; i++) {
            char c = ex.uri().charAt(i);
            if (c < '0' || c > '9') {
                return intParam(ex, "type", 0, 0, 65535); // decoded, or refused with a clear error
            }
            value = value * 10 + (c - '0');
        }
        return end > start && end - start <= 5 && value <= 65535 ? value : intParam(ex, "type", 0, 0, 65535);
    }

    static WalReader.Visibility visibility(Exchange ex) {
        String v = ex.param("visibility");
        if (v == null || v.equalsIgnoreCase("flushed")) {
            return WalReader.Visibility.FLUSHED;
        }
        if (v.equalsIgnoreCase("written")) {
            return WalReader.Visibility.WRITTEN;
        }
        throw new IllegalArgumentException("visibility must be written or flushed, got '" + v + "'");
    }

    static int intParam(Exchange ex, String name, int defaultValue, int min, int max) {
        String v = ex.param(name);
        if (v == null) {
            return defaultValue;
        }
        try {
            int n = Integer.parseInt(v.trim());
            if (n < min || n > max) {
                throw new IllegalArgumentException(name + " must be from " + min + " to " + max + ", got " + n);
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a whole number, got '" + v + "'", e);
        }
    }
}
