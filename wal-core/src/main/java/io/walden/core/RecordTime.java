package io.walden.core;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;

/**
 * Record times as users read and write them: RFC 3339 in UTC with microseconds, {@code 2026-11-25T17:03:04.123456Z}
 * (what {@link WalRecord#timestamp()} holds, docs/format.md "Records"). Parsing takes any RFC 3339 time, with any
 * offset and any number of fractional digits, or none.
 */
public final class RecordTime {
    private static final DateTimeFormatter MICROS = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSSX")
            .withZone(ZoneOffset.UTC);

    private RecordTime() {
    }

    /** Microseconds since the epoch (a record's time as the log stores it) as an instant. */
    public static Instant ofMicros(long micros) {
        return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
    }

    /** {@code t} in microseconds since the epoch (anything finer is cut off). */
    public static long toMicros(Instant t) {
        return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1_000);
    }

    /** {@code t} in UTC with six fractional digits (anything finer than a microsecond is cut off). */
    public static String format(Instant t) {
        return MICROS.format(t);
    }

    /**
     * Parses an RFC 3339 time ({@code 2026-11-25T17:03:04Z}, {@code 2026-11-25T18:03:04.5+01:00}).
     *
     * @throws IllegalArgumentException naming the text and the expected form
     */
    public static Instant parse(String text) {
        try {
            return OffsetDateTime.parse(text.trim(), DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant();
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("not an RFC 3339 time: '" + text + "' (expected e.g. 2026-11-25T17:03:04Z"
                    + " or 2026-11-25T17:03:04.123456+01:00)", e);
        }
    }
}
