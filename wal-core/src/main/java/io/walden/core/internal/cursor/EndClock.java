package io.walden.core.internal.cursor;

/**
 * When the log's end passed which LSN: samples of (end, time), taken about once a second by the background writer,
 * an hour of them. How long ago the end passed a cursor's LSN is the cursor's lag in time, to the sampling
 * resolution, for records that carry no time of their own. A sample is kept only when the end moved.
 *
 * <p>The clock knows only what it saw: when the end had passed an LSN before the oldest sample (before this open, or
 * more than the samples go back), how long ago it passed is unknown, and {@link #secondsSincePassed} says so (NaN)
 * rather than give the oldest sample's age, which would show a record days old as seconds old.
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

    /**
     * Seconds from the first sample past {@code lsn} to {@code now}: 0 when no sample is past it yet; NaN (unknown)
     * when no sample is at or before it (no sample at all, or the end had passed it before the oldest one).
     */
    public synchronized double secondsSincePassed(long lsn, long now) {
        int oldest = (next + SAMPLES - count) % SAMPLES;
        for (int i = count - 1; i >= 0; i--) { // newest first: a caught-up cursor stops at once
            if (ends[(oldest + i) % SAMPLES] <= lsn) {
                long passed = i + 1 < count ? nanos[(oldest + i + 1) % SAMPLES] : now;
                return Math.max(0, (now - passed) / 1e9);
            }
        }
        return Double.NaN;
    }
}
