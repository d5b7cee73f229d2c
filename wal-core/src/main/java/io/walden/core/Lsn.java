package io.walden.core;

import io.walden.core.internal.segment.SegmentHeaderDescriptor;

import java.util.Locale;

/**
 * Log sequence numbers: a {@code long} byte position in the whole log, never reused.
 *
 * <p>Every user-facing string renders an LSN as PostgreSQL does, the high and low 32 bits in
 * hexadecimal separated by a slash ({@code 16/B374D848}); every input accepts that form and a plain
 * decimal number. {@link #INVALID} (0) is never the position of a record: the first record of a log
 * follows its first segment's header.
 *
 * <p>Thread-safety: stateless, all methods are pure functions.
 */
public final class Lsn {
    /** Not a record position; the "previous record" of a log's first record. */
    public static final long INVALID = 0L;
    /**
     * Where the first record of a new log goes ({@code 0/40}): just after its first segment's header (docs/format.md);
     * a new replica asks its primary for everything from here.
     */
    public static final long FIRST = SegmentHeaderDescriptor.LENGTH;

    private Lsn() {
    }

    /** Renders {@code lsn} as {@code X/Y} (upper-case hexadecimal halves, no leading zeros). */
    public static String format(long lsn) {
        return Long.toHexString(lsn >>> 32).toUpperCase(Locale.ROOT) + "/"
                + Long.toHexString(lsn & 0xFFFF_FFFFL).toUpperCase(Locale.ROOT);
    }

    /**
     * Parses {@code X/Y} (hexadecimal halves, each at most 8 digits) or a non-negative decimal number.
     *
     * @throws IllegalArgumentException naming the text when it is neither
     */
    public static long parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("LSN is missing");
        }
        String s = text.trim();
        int slash = s.indexOf('/');
        try {
            if (slash < 0) {
                long value = Long.parseLong(s);
                if (value < 0) {
                    throw new NumberFormatException("negative");
                }
                return value;
            }
            String hi = s.substring(0, slash);
            String lo = s.substring(slash + 1);
            if (!isHex(hi) || !isHex(lo)) {
                throw new NumberFormatException("each half needs 1 to 8 hex digits");
            }
            long value = (Long.parseLong(hi, 16) << 32) | Long.parseLong(lo, 16);
            if (value < 0) {
                throw new NumberFormatException("beyond the largest LSN"); // LSNs are non-negative longs
            }
            return value;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "not an LSN: '" + text + "' (expected X/Y in hexadecimal, e.g. 16/B374D848, or a decimal number)", e);
        }
    }

    /** 1 to 8 ASCII hexadecimal digits and nothing else: no sign or other script's digits, which Long.parseLong takes. */
    private static boolean isHex(String half) {
        if (half.isEmpty() || half.length() > 8) {
            return false;
        }
        for (int i = 0; i < half.length(); i++) {
            char c = half.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F')) {
                return false;
            }
        }
        return true;
    }
}
