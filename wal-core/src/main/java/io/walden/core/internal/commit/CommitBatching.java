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
    /**
     * How many recent flush times a deferred gather ({@link #gatherRemainingNanos}) lasts at most, from the first
     * commit. Longer than a blocking leader's half: the siblings it waits for are requests of remote clients, each a
     * network round trip and a pass of an event loop away. On two cores, 64 connections' requests arrive over a few
     * flush times: a window of half a flush time gathered half of them per flush, two flush times 0.75, four 0.95
     * (wal-bench HttpLoad). A wrong estimate costs the commits of one flush this long, and the estimate decays by an
     * eighth per flush.
     */
    static final int DEFERRED_GATHER_FLUSHES = 4;
    /** The shortest re-check {@link #flushInProgressRecheckNanos} asks for. */
    static final long MIN_RECHECK_NANOS = TimeUnit.MICROSECONDS.toNanos(10);
    private final long commitDelayNanos;
    private final int commitSiblings;
    /** Highest number of outstanding commits seen since the last flush; written racily (an estimate). */
    private volatile int peakOutstanding;
    /**
     * Leader-owned estimates: commits to expect per flush (x16, fixed point) and the mean flush time. Written by the
     * leader only; volatile because a thread deciding whether to flush yet ({@link #gatherRemainingNanos}) reads them.
     */
    private volatile int expectedX16 = 16;
    private volatile long flushNanosEwma = TimeUnit.MICROSECONDS.toNanos(200);
    /**
     * When the first commit since the last flush asked for one ({@link System#nanoTime()}), 0 when none did: where
     * the gather of a thread that defers its flush instead of waiting starts. Set racily: a lost update moves the
     * deadline by the few nanoseconds between two commits.
     */
    private volatile long firstRequestNanos;
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
        if (firstRequestNanos == 0) {
            firstRequestNanos = System.nanoTime();
        }
    }

    /**
     * Any thread: how much longer to put a flush off for the commits the log expects ({@link #awaitExpectedCommits}'s
     * estimate), for a thread that must not block and defers its flush instead: 0 when the expected commits asked
     * for a flush, when no more than one is expected (a lone committer never waits), or when
     * {@value #DEFERRED_GATHER_FLUSHES} recent flush times have passed since the first of them asked.
     */
    public long gatherRemainingNanos() {
        int expected = expectedX16 >> 4;
        long first = firstRequestNanos;
        if (expected <= 1 || first == 0 || flushRequests.sum() >= expected) {
            return 0;
        }
        return Math.max(0, first + DEFERRED_GATHER_FLUSHES * flushNanosEwma - System.nanoTime());
    }

    /** Any thread: when to look again at a flush in progress elsewhere, which may not cover what asked since. */
    public long flushInProgressRecheckNanos() {
        return Math.max(MIN_RECHECK_NANOS, flushNanosEwma / 4);
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
        firstRequestNanos = 0; // before the reset: a commit asking meanwhile starts the next gather, a little early
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
