package io.walden.server.config;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How a setting's text is read, one syntax per kind wherever it is set (flag, YAML, default): sizes in bytes or with a
 * binary unit ({@code 64MiB}), durations with a unit ({@code 200ms}, {@code 60s}, {@code 5m}, {@code 12h}, {@code 7d}),
 * booleans, counts, addresses. Each parser throws IllegalArgumentException saying what it expected; the caller names the
 * setting.
 *
 * <p>Thread-safety: stateless.
 */
public final class Values {
    private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*([a-zA-Z]*)");
    private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*([a-zA-Z]*)");
    /** The longest duration: what a count of nanoseconds holds, in the largest unit below it. */
    private static final String MAX_DURATION = Duration.ofNanos(Long.MAX_VALUE).toDays() + "d";

    private Values() {
    }

    /**
     * A size: a plain number is bytes; {@code B}, {@code KiB}, {@code MiB}, {@code GiB}, {@code TiB} (or {@code KB},
     * {@code MB}, {@code GB}, {@code TB}, read as the same powers of 1024, as PostgreSQL does), in any case.
     */
    public static long size(String text) {
        Matcher m = SIZE.matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("a size such as 67108864, 64MiB or 4GiB, not '" + text + "'");
        }
        int shift;
        switch (m.group(2).toLowerCase(Locale.ROOT)) {
            case "":
            case "b":
                shift = 0;
                break;
            case "k": case "kb": case "kib":
                shift = 10;
                break;
            case "m": case "mb": case "mib":
                shift = 20;
                break;
            case "g": case "gb": case "gib":
                shift = 30;
                break;
            case "t": case "tb": case "tib":
                shift = 40;
                break;
            default:
                throw new IllegalArgumentException("unknown size unit '" + m.group(2) + "' in '" + text
                        + "' (B, KiB, MiB, GiB or TiB)");
        }
        long n;
        try {
            n = Long.parseLong(m.group(1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is too large", e);
        }
        if (n > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException("'" + text + "' is too large");
        }
        return n << shift;
    }

    /** A size above zero. */
    public static long positiveSize(String text) {
        long n = size(text);
        if (n <= 0) {
            throw new IllegalArgumentException("must be more than zero, not '" + text + "'");
        }
        return n;
    }

    /**
     * A duration: a number with a unit, {@code ms}, {@code s}, {@code m} or {@code min}, {@code h}, {@code d}. A plain
     * number is in {@code plainUnit}, the unit of a setting's older {@code -ms} name; with {@code plainUnit} null it is
     * refused (is {@code 7} seconds, or Kafka's milliseconds?), but for {@code 0}, which every unit reads alike. A
     * duration is at most what a count of nanoseconds holds (about 292 years), as the log counts time in them.
     */
    public static Duration duration(String text, ChronoUnit plainUnit) {
        Matcher m = DURATION.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("a duration such as 200ms, 60s, 5m, 12h or 7d, not '" + text + "'");
        }
        String unit = m.group(2);
        if (unit.isEmpty() && plainUnit == null && !m.group(1).matches("0+")) {
            String n = m.group(1);
            throw new IllegalArgumentException("'" + text + "' needs a unit: " + n + "ms, " + n + "s, " + n + "m, " + n
                    + "h or " + n + "d");
        }
        try {
            Duration d = switch (unit) {
                case "" -> Duration.of(Long.parseLong(m.group(1)), plainUnit == null ? ChronoUnit.MILLIS : plainUnit);
                case "ms" -> Duration.ofMillis(Long.parseLong(m.group(1)));
                case "s" -> Duration.ofSeconds(Long.parseLong(m.group(1)));
                case "m", "min" -> Duration.ofMinutes(Long.parseLong(m.group(1)));
                case "h" -> Duration.ofHours(Long.parseLong(m.group(1)));
                case "d" -> Duration.ofDays(Long.parseLong(m.group(1)));
                default -> throw new IllegalArgumentException("unknown duration unit '" + unit + "' in '" + text
                        + "' (ms, s, m, h or d)");
            };
            d.toNanos(); // throws beyond MAX_DURATION
            return d;
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("'" + text + "' is too long: at most " + MAX_DURATION, e);
        }
    }

    /** {@code true} or {@code false}. */
    public static boolean bool(String text) {
        String v = text.trim();
        if (!v.equals("true") && !v.equals("false")) {
            throw new IllegalArgumentException("true or false, not '" + text + "'");
        }
        return v.equals("true");
    }

    /** A whole number above zero, capped at an int's largest (a limit beyond it is no limit anyway). */
    public static int positiveInt(String text) {
        try {
            long n = Long.parseLong(text.trim());
            if (n > 0) {
                return (int) Math.min(Integer.MAX_VALUE, n);
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw new IllegalArgumentException("a whole number above zero, not '" + text + "'");
    }

    /** Text that means nothing when blank (a secret, a policy): null then. */
    public static String text(String text) {
        return text.isBlank() ? null : text;
    }

    /** HOST:PORT (IPv6 hosts in brackets); the host must resolve locally. */
    public static InetSocketAddress address(String text) {
        int colon = text == null ? -1 : text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new IllegalArgumentException("expected HOST:PORT, got '" + text + "'");
        }
        String host = text.substring(0, colon).replace("[", "").replace("]", "");
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad port in '" + text + "'", e);
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port out of range in '" + text + "'");
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(host), port);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("unknown host '" + host + "'", e);
        }
    }

    /** An archive's URI: {@code s3://bucket[/prefix]} or {@code file:///dir} (checked again when opened). */
    public static String archiveUri(String text) {
        if (!text.startsWith("s3://") && !text.startsWith("file:")) {
            throw new IllegalArgumentException("s3://bucket[/prefix] or file:///dir, not '" + text + "'");
        }
        return text;
    }
}
