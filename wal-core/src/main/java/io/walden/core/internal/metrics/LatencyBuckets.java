package io.walden.core.internal.metrics;

import java.time.Duration;

/**
 * The histogram buckets Walden exports (Prometheus {@code _bucket} series), one list per kind of value, so that every
 * meter of a kind aggregates with the others: few enough that a scrape stays small, spread over what a disk and a
 * network take, from a fast NVMe force to a stuck replica.
 */
public final class LatencyBuckets {
    /** Forces: 50 µs (NVMe with a write cache) to 1 s (a disk in trouble). */
    public static final Duration[] FLUSH = durations(50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000,
            100_000, 200_000, 500_000, 1_000_000);
    /** Commits, local or waiting for replicas: 100 µs to 10 s (a remote commit timeout is seconds). */
    public static final Duration[] COMMIT = durations(100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000,
            100_000, 200_000, 500_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000);
    /** Commits served by one force: powers of two up to 4096. */
    public static final double[] COMMITS_PER_FLUSH = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};

    private LatencyBuckets() {
    }

    private static Duration[] durations(long... micros) {
        Duration[] d = new Duration[micros.length];
        for (int i = 0; i < micros.length; i++) {
            d[i] = Duration.ofNanos(micros[i] * 1000);
        }
        return d;
    }
}
