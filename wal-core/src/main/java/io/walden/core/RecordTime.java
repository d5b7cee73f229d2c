package io.walden.core;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.chrono.IsoChronology;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.format.ResolverStyle;

/**
 * Record times as users read and write them: RFC 3339 in UTC with microseconds, {@code 2026-11-25T17:03:04.123456Z}
 * (what {@link WalRecord#timestamp()} holds, docs/format.md "Records"). Parsing takes any RFC 3339 time, with any
 * offset and any number of fractional digits, or none, and ISO 8601's offsets without a colon ({@code +0000}, what
 * Python's {@code %z} and so openapi-generator's Python clients send).
 *
 * <p>A record time is a signed 64-bit count of microseconds since the epoch: from {@link #MIN} to {@link #MAX}, about
 * 290,000 years either side of 1970. Every way a user gives a time ({@link #parse}) and every conversion of an
 * {@link Instant} into a record time ({@link #toMicros}) refuses one outside that range with an
 * {@link IllegalArgumentException} that names it, so that no caller meets an arithmetic overflow.
 *
 * <p>Thread-safety: stateless.
 */
public final class RecordTime {
    private static final DateTimeFormatter MICROS = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSSX")
            .withZone(ZoneOffset.UTC);
    /** RFC 3339's date-time, whose offset may also be ISO 8601's basic {@code +hhmm}. */
    private static final DateTimeFormatter RFC_3339 = new DateTimeFormatterBuilder().parseCaseInsensitive()
            .append(DateTimeFormatter.ISO_LOCAL_DATE_TIME)
            .optionalStart().appendOffset("+HH:MM", "Z").optionalEnd()
            .optionalStart().appendOffset("+HHMM", "Z").optionalEnd()
            .toFormatter().withResolverStyle(ResolverStyle.STRICT).withChronology(IsoChronology.INSTANCE);
    /**
     * The earliest record time: the first whole second after {@code Long.MIN_VALUE} microseconds (the few hundred
     * thousand microseconds below it are left out so that the bound is a plain second and every step of the
     * conversion stays within a long).
     */
    public static final Instant MIN = Instant.ofEpochSecond(Math.floorDiv(Long.MIN_VALUE, 1_000_000L) + 1);
    /** The latest record time: {@code Long.MAX_VALUE} microseconds since the epoch. */
    public static final Instant MAX = ofMicros(Long.MAX_VALUE);

    private RecordTime() {
    }

    /** Microseconds since the epoch (a record's time as the log stores it) as an instant. */
    public static Instant ofMicros(long micros) {
        return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
    }

    /**
     * {@code t} in microseconds since the epoch (anything finer is cut off).
     *
     * @throws IllegalArgumentException when {@code t} is outside {@link #MIN} to {@link #MAX}, naming the range
     */
    public static long toMicros(Instant t) {
        return Math.addExact(Math.multiplyExact(inRange(t, t).getEpochSecond(), 1_000_000L), t.getNano() / 1_000);
    }

    /** {@code t} in UTC with six fractional digits (anything finer than a microsecond is cut off). */
    public static String format(Instant t) {
        return MICROS.format(t);
    }

    /**
     * Parses an RFC 3339 time ({@code 2026-11-25T17:03:04Z}, {@code 2026-11-25T18:03:04.5+01:00}), its offset also
     * as ISO 8601's {@code +0100}.
     *
     * @throws IllegalArgumentException naming the text and the expected form, or the range of record times when the
     *                                  time is outside it
     */
    public static Instant parse(String text) {
        Instant t;
        try {
            t = OffsetDateTime.parse(text.trim(), RFC_3339).toInstant();
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("not an RFC 3339 time: '" + text + "' (expected e.g. 2026-11-25T17:03:04Z"
                    + " or 2026-11-25T17:03:04.123456+01:00)", e);
        }
        return inRange(t, text);
    }

    /** {@code t}, or refused when a record time cannot hold it; {@code given} is what the user wrote, for the message. */
    private static Instant inRange(Instant t, Object given) {
        if (t.isBefore(MIN) || t.isAfter(MAX)) {
            throw new IllegalArgumentException("'" + given + "' is outside the times a record can hold, " + format(MIN)
                    + " to " + format(MAX));
        }
        return t;
    }
}
