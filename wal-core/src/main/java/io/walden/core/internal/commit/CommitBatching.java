package io.walden.core.internal.commit;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * How long a flush leader waits, before it samples its target, for the commits it can expect (GroupCommit's class
 * comment, and docs/group-commit.md): the adaptive gather, and PostgreSQL's {@code commit_delay}/{@code commit_siblings}
 * on top when set.
 *
 * <p>Closed-loop committers otherwise settle into two groups that alternate between flushes, halving the commits per
 * flush. The estimate is the peak number of outstanding commits (blocked committers plus pending futures) of the
 * recent cycles, risen to at once and decayed by an eighth per flush; the wait ends when that many commits asked for a
 * flush, and lasts at most half the recent flush time, so a lone committer never waits and a wrong estimate costs at
 * most half a flush.
 *
 * <p>Thread-safety: {@link #notePeak}, {@link #commitRequested} and the committer count ({@link #committerBlocks},
 * {@link #committerReturns}, {@link #committers}) from any thread (the peak is a racy maximum: a lost update only makes
 * the estimate a little low); the rest from the flush leader only (one at a time).
 */
public final class CommitBatching {
    private final long commitDelayNanos;
    private final int commitSiblings;
    /** Highest number of outstanding commits seen since the last flush; written racily (an estimate). */
    private volatile int peakOutstanding;
    /** Leader-owned estimates: commits to expect per flush (x16, fixed point) and the mean flush time. */
    private int expectedX16 = 16;
    private long flushNanosEwma = TimeUnit.MICROSECONDS.toNanos(200);
    private final LongAdder flushRequests = new LongAdder();
    /** Committers blocked for a commit of their own (the other outstanding commits are pending futures). */
    private final AtomicInteger committers = new AtomicInteger();

    public CommitBatching(long commitDelayNanos, int commitSiblings) {
        this.commitDelayNanos = commitDelayNanos;
        this.commitSiblings = commitSiblings;
    }

    /** A committer blocks until its commit is flushed; returns how many do now. */
    public int committerBlocks() {
        return committers.incrementAndGet();
    }

    /** A committer that {@link #committerBlocks blocked} returns (flushed, or failed). */
    public void committerReturns() {
        committers.decrementAndGet();
    }

    public int committers() {
        return committers.get();
    }

    /** A commit is outstanding: {@code outstanding} of them now. */
    public void notePeak(int outstanding) {
        if (outstanding > peakOutstanding) {
            peakOutstanding = outstanding;
        }
    }

    /** A durable append asked for a flush (counted for the commits-per-flush figure and the leader's wait). */
    public void commitRequested() {
        flushRequests.increment();
    }

    /**
     * Leader only: {@code commit_delay} when at least {@code commit_siblings} other committers are active, then waits
     * until the expected number of commits asked for a flush, or half a flush time passed.
     */
    public void awaitExpectedCommits(int otherCommitters) {
        if (commitDelayNanos > 0 && otherCommitters >= commitSiblings) {
            LockSupport.parkNanos(this, commitDelayNanos);
        }
        int expected = expectedX16 >> 4;
        if (expected <= 1) {
            return;
        }
        long deadline = System.nanoTime() + flushNanosEwma / 2;
        for (int spins = 0; flushRequests.sum() < expected && System.nanoTime() < deadline; spins++) {
            if (spins < 50) {
                Thread.onSpinWait();
            } else {
                Thread.yield(); // the committers we wait for need the CPU to get here
            }
        }
    }

    /** Leader only, as it writes: the commits that asked for this flush (and the count starts again). */
    public long takeRequests() {
        return flushRequests.sumThenReset();
    }

    /** Leader only: updates the estimates after a flush that took {@code flushNanos}, {@code outstanding} commits left. */
    public void learn(long flushNanos, int outstanding) {
        flushNanosEwma += (flushNanos - flushNanosEwma) >> 3;
        int peak = peakOutstanding;
        peakOutstanding = outstanding;
        // Rise at once to a new peak, decay by 1/8 per flush when the load falls.
        expectedX16 = Math.max(peak << 4, expectedX16 - (expectedX16 >> 3));
    }
}
