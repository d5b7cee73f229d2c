package io.walden.replication.primary;

import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * A connected replica's reported positions. They start unknown (0): the start LSN of its hello is what it
 * has written, not what it has flushed. It counts for the synchronous policy only once it has caught up
 * with the backlog it had when it connected (PostgreSQL's "streaming" state), so a replica returning far
 * behind does not stall commits that a caught-up one could confirm.
 */
final class ReplicaState {
    final String name;
    final long catchUpTarget;
    volatile long written;
    volatile long flushed;
    volatile long applied;
    volatile boolean streaming;
    /**
     * Lags in milliseconds (PostgreSQL's write/flush/replay lag): from sending a position until it was reported; -1 when
     * there is none to show (nothing measured yet, or the replica reported everything sent a while ago: an idle,
     * caught-up replica has no lag, as PostgreSQL shows NULL). Written on the connection's event loop, read anywhere.
     */
    volatile long writeLagMillis = -1;
    volatile long flushLagMillis = -1;
    volatile long applyLagMillis = -1;
    /** What the last report measured, for the {@code walden.replica.lag} timers: -1 where it measured nothing new. */
    long measuredWrite = -1;
    long measuredFlush = -1;
    long measuredApply = -1;
    /** When each level's lag was last measured (nanoTime), to let a caught-up level's last lag show for a while. */
    private final long[] measuredAt = new long[3];
    /** How long a caught-up level keeps showing its last measured lag before it shows none. */
    static final long SHOW_AFTER_CATCH_UP_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Sent positions and when, oldest first; bounded (older samples are dropped). Guarded by itself. */
    private final ArrayDeque<long[]> sent = new ArrayDeque<>();
    private static final int MAX_SAMPLES = 4096;

    ReplicaState(String name, long catchUpTarget, long startLsn) {
        this.name = name;
        this.catchUpTarget = catchUpTarget;
        this.sentLsn = startLsn;
    }

    /**
     * Where the replica's log ends if it took everything sent on this connection: its start LSN, then the end of
     * each chunk sent (past the next segment's header after a closing record). Written by the sender thread.
     */
    volatile long sentLsn;

    void sent(long endLsn, long nanos) {
        sentLsn = endLsn;
        synchronized (sent) {
            if (sent.size() == MAX_SAMPLES) {
                // Full (a level stuck far behind): the second oldest goes, never the oldest, whose age is how long the
                // stuck level has waited.
                long[] oldest = sent.pollFirst();
                sent.pollFirst();
                sent.addFirst(oldest);
            }
            sent.addLast(new long[] {endLsn, nanos});
        }
    }

    /**
     * Takes a status report. Each position only rises, and never past what was sent on this connection: a replica
     * cannot hold more than that (plus what it had), so a report beyond it is a lie or a bug, and taken as it came it
     * would release ON commits after a local flush only and let its slot stop protecting the real replica. Clamp,
     * never trust. The lags are measured from when each position was sent. On the connection's event loop only.
     *
     * @return true for the report that caught the replica up: it counts for the synchronous policy from now on
     */
    boolean report(long writtenLsn, long flushedLsn, long appliedLsn, long now) {
        long sent = sentLsn;
        long w = written, f = flushed, a = applied;
        written = Math.max(w, Math.min(writtenLsn, sent));
        flushed = Math.max(f, Math.min(flushedLsn, sent));
        applied = Math.max(a, Math.min(appliedLsn, sent));
        measuredWrite = measure(0, w, written, now);
        measuredFlush = measure(1, f, flushed, now);
        measuredApply = measure(2, a, applied, now);
        writeLagMillis = shown(0, writeLagMillis, measuredWrite, written, sent, now);
        flushLagMillis = shown(1, flushLagMillis, measuredFlush, flushed, sent, now);
        applyLagMillis = shown(2, applyLagMillis, measuredApply, applied, sent, now);
        trim(Math.min(written, Math.min(flushed, applied)));
        if (!streaming && flushed >= catchUpTarget) {
            streaming = true;
            return true;
        }
        return false;
    }

    /**
     * One level moved from {@code from} to {@code to}: its lag is the time since the newest sent position it passed was
     * sent, each sent position measured once per level (the {@code walden.replica.lag} timers record exactly these).
     * When it passed none it measures nothing: so a replica reporting the same position again, as an idle caught-up one
     * does at every keepalive, adds nothing, and a stuck one shows in {@link #waitingMillis} instead.
     *
     * @return the lag in ms, or -1 for none measured
     */
    private long measure(int level, long from, long to, long now) {
        synchronized (sent) {
            long passed = -1;
            for (long[] sample : sent) {
                if (sample[0] > to) {
                    break;
                }
                if (sample[0] > from) {
                    passed = sample[1];
                }
            }
            if (passed < 0) {
                return -1;
            }
            measuredAt[level] = now;
            return TimeUnit.NANOSECONDS.toMillis(now - passed);
        }
    }

    /**
     * How long the oldest position sent and not reported at a level that stands at {@code reported} has waited, in ms;
     * 0 when it has everything sent. Computed when asked, not at a report: a replica stuck in a force or an applier sends
     * no report, and its wait still grows.
     */
    long waitingMillis(long reported, long now) {
        if (reported >= sentLsn) {
            return 0;
        }
        synchronized (sent) {
            for (long[] sample : sent) {
                if (sample[0] > reported) {
                    return TimeUnit.NANOSECONDS.toMillis(now - sample[1]);
                }
            }
        }
        return 0;
    }

    /**
     * What the status shows for a level: a fresh measurement; else the last one while the level is behind what was sent,
     * or for {@link #SHOW_AFTER_CATCH_UP_NANOS} after it has everything sent; then none.
     */
    private long shown(int level, long before, long measured, long to, long sentEnd, long now) {
        if (measured >= 0 || to < sentEnd) {
            return measured >= 0 ? measured : before;
        }
        return now - measuredAt[level] < SHOW_AFTER_CATCH_UP_NANOS ? before : -1;
    }

    /** Forgets samples every level has passed, keeping the newest one at or below {@code lsn}. */
    void trim(long lsn) {
        synchronized (sent) {
            while (sent.size() > 1) {
                long[] first = sent.pollFirst();
                if (sent.peekFirst()[0] > lsn) {
                    sent.addFirst(first);
                    return;
                }
            }
        }
    }
}
