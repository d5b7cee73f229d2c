package io.walden.server.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The settings as given (key to text), with the typed reads that every setting of a kind shares, each failing with
 * an error that names the setting: an operator sees which key to fix, whichever source set it.
 *
 * <p>Thread-safety: immutable once built (the map is never changed after loading).
 */
final class Settings {
    private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|min|h)?");

    private final Map<String, String> values;

    Settings(Map<String, String> values) {
        this.values = values;
    }

    /** The setting's text as given, or null when it is not set and has no default. */
    String get(String key) {
        return values.get(key);
    }

    /** A setting that is unset when absent or blank: null then. */
    String nonBlank(String key) {
        String v = values.get(key);
        return v == null || v.isBlank() ? null : v;
    }

    /** A file setting, or null when it is not set. */
    Path path(String key) {
        return values.get(key) == null ? null : Path.of(values.get(key));
    }

    /** A setting that must be true or false, with an error naming it otherwise. */
    boolean bool(String key) {
        String v = values.get(key).trim();
        if (!v.equals("true") && !v.equals("false")) {
            throw new IllegalArgumentException(key + " must be true or false, got '" + v + "'");
        }
        return v.equals("true");
    }

    /** A setting that must be a positive whole number, with an error naming it otherwise. */
    long positive(String key) {
        String v = values.get(key).trim();
        try {
            long n = Long.parseLong(v);
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw new IllegalArgumentException(key + " must be a positive whole number, got '" + v + "'");
    }

    /** A positive count held in an int: capped rather than refused, since a limit beyond an int is no limit anyway. */
    int positiveInt(String key) {
        return (int) Math.min(Integer.MAX_VALUE, positive(key));
    }

    /** A duration setting: 500ms, 60s, 5m, 1h, or a plain number of seconds. */
    Duration duration(String key) {
        String v = values.get(key).trim().toLowerCase(Locale.ROOT);
        Matcher m = DURATION.matcher(v);
        if (!m.matches()) {
            throw new IllegalArgumentException(key + " is a duration such as 500ms, 60s, 5m or 1h, not '" + values.get(key) + "'");
        }
        long n = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        switch (unit) {
            case "ms":
                return Duration.ofMillis(n);
            case "s":
                return Duration.ofSeconds(n);
            case "m":
            case "min":
                return Duration.ofMinutes(n);
            default:
                return Duration.ofHours(n);
        }
    }

    /** The settings with their secrets hidden, for logs. */
    @Override
    public String toString() {
        Map<String, String> shown = new TreeMap<>(values);
        if (shown.containsKey("auth-token")) {
            shown.put("auth-token", "***");
        }
        if (shown.containsKey("replication-secret")) {
            shown.put("replication-secret", "***");
        }
        return shown.toString();
    }
}
