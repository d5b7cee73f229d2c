package io.walden.core.internal.cursor;

/**
 * When the log's end passed which LSN: samples of (end, time), taken about once a second by the background writer,
 * an hour of them. How long ago the end passed a cursor's LSN is the cursor's lag in time, to the sampling
 * resolution; a cursor behind for longer than the samples go back (or since before this open) shows at least the
 * oldest sample's age. A sample is kept only when the end moved.
 *
 * <p>Thread-safety: any thread; samples and lookups are serialised on this object (once a second, and per lookup).
 */
public final class EndClock {
    private static final int SAMPLES = 3600;
    private final long[] ends = new long[SAMPLES];
    private final long[] nanos = new long[SAMPLES];
    private int count;
    private int next;

    public synchronized void sample(long end, long now) {
        if (count > 0 && ends[(next + SAMPLES - 1) % SAMPLES] == end) {
            return; // the end has not moved: the earlier sample says when it got here
        }
        ends[next] = end;
        nanos[next] = now;
        next = (next + 1) % SAMPLES;
        count = Math.min(count + 1, SAMPLES);
    }

    /** Seconds from the first sample past {@code lsn} to {@code now} (0 with no sample, or none past it yet). */
    public synchronized double secondsSincePassed(long lsn, long now) {
        if (count == 0) {
            return 0;
        }
        int oldest = (next + SAMPLES - count) % SAMPLES;
        long passed = nanos[oldest]; // a lower bound when even the oldest sample was past it
        for (int i = count - 1; i >= 0; i--) { // newest first: a caught-up cursor stops at once
            if (ends[(oldest + i) % SAMPLES] <= lsn) {
                passed = i + 1 < count ? nanos[(oldest + i + 1) % SAMPLES] : now;
                break;
            }
        }
        return Math.max(0, (now - passed) / 1e9);
    }
}
