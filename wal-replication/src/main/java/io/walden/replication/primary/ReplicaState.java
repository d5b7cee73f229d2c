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
    /** Lags in milliseconds (PostgreSQL's write/flush/replay lag): from sending a position until it was reported. */
    volatile long writeLagMillis = -1;
    volatile long flushLagMillis = -1;
    volatile long applyLagMillis = -1;
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
                sent.pollFirst();
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
        written = Math.max(written, Math.min(writtenLsn, sent));
        flushed = Math.max(flushed, Math.min(flushedLsn, sent));
        applied = Math.max(applied, Math.min(appliedLsn, sent));
        writeLagMillis = lagFor(written, now);
        flushLagMillis = lagFor(flushed, now);
        applyLagMillis = lagFor(applied, now);
        trim(Math.min(written, Math.min(flushed, applied)));
        if (!streaming && flushed >= catchUpTarget) {
            streaming = true;
            return true;
        }
        return false;
    }

    /** The lag of the newest sent position at or below {@code lsn}, in ms, or -1 if none is known. */
    long lagFor(long lsn, long now) {
        synchronized (sent) {
            long time = -1;
            for (long[] sample : sent) {
                if (sample[0] > lsn) {
                    break;
                }
                time = sample[1];
            }
            return time < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(now - time);
        }
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
