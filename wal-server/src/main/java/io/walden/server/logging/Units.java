package io.walden.server.logging;

import java.time.Duration;

/**
 * Sizes and durations as an operator writes them in a setting ({@code 64MiB}, {@code 7d}, {@code 200ms}), for every
 * log line and message of the server that shows one: never {@code PT168H} or {@code 107374182400 bytes}. Each text is
 * the largest unit that holds the value exactly, so that it reads back as the same value where a setting takes it
 * ({@code io.walden.server.config.Values}); a size no binary unit holds exactly is shown in bytes ({@code 1000B}).
 *
 * <p>Thread-safety: stateless.
 */
public final class Units {
    private static final String[] SIZE_UNITS = {"TiB", "GiB", "MiB", "KiB"};
    private static final int[] SIZE_SHIFTS = {40, 30, 20, 10};

    private Units() {
    }

    /** {@code 100GiB}, {@code 64MiB}, {@code 1000B}, {@code 0B}. */
    public static String size(long bytes) {
        for (int i = 0; i < SIZE_UNITS.length; i++) {
            long unit = 1L << SIZE_SHIFTS[i];
            if (bytes != 0 && bytes % unit == 0) {
                return (bytes >> SIZE_SHIFTS[i]) + SIZE_UNITS[i];
            }
        }
        return bytes + "B";
    }

    /**
     * {@code 7d}, {@code 12h}, {@code 5m}, {@code 90s}, {@code 200ms}, {@code 0s}; a duration finer than a millisecond
     * (none a setting can hold) in nanoseconds.
     */
    public static String duration(Duration d) {
        if (d.isZero()) {
            return "0s";
        }
        if (d.getNano() % 1_000_000 != 0) {
            return d.toNanos() + "ns";
        }
        long ms = d.toMillis();
        if (ms % 86_400_000 == 0) {
            return ms / 86_400_000 + "d";
        }
        if (ms % 3_600_000 == 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms % 60_000 == 0) {
            return ms / 60_000 + "m";
        }
        if (ms % 1000 == 0) {
            return ms / 1000 + "s";
        }
        return ms + "ms";
    }

    /** {@link #duration(Duration)} of a number of milliseconds. */
    public static String millis(long ms) {
        return duration(Duration.ofMillis(ms));
    }
}
