package io.walden.core.internal.commit;

import io.walden.core.Lsn;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.segment.SegmentRegistry;
import io.walden.core.internal.sync.SyncStrategy;

import java.io.IOException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * PostgreSQL's flush leader: the one committer at a time that writes, forces and moves the flushed position for
 * everyone (docs/group-commit.md, "The flush leader"). It is elected by one CAS on a flag; the committers that lose
 * the election wait in GroupCommit.awaitFlushed and mostly find, when woken, that the leader covered them.
 *
 * <p>Guarantees:
 * <ul>
 *   <li>At most one flush is in flight ({@code leader} is a mutual-exclusion flag taken by CAS); stepping down is a
 *       volatile store, so the next leader sees everything this one did.</li>
 *   <li>{@code flushed} never exceeds what a completed force covered: the leader samples its target from the published
 *       position (every record below it published, seen through acquire loads), writes up to it
 *       ({@link WalWriteLock#writeForFlush}), forces, and only then stores the target (volatile) into {@code flushed};
 *       once the log failed, never again ({@link LogFailure}).</li>
 *   <li>No lost wake-up: the leader stores {@code flushed} and steps down before it pops the waiter stack, while a
 *       waiter pushes itself before it re-reads both; one of the two sees the other.</li>
 * </ul>
 *
 * <p>Before sampling its target the leader waits, boundedly, for the commits the recent load says are coming
 * ({@link CommitBatching}), then, briefly, for records already reserved by other appenders to be published
 * (PostgreSQL's WaitXLogInsertionsToFinish).
 *
 * <p>Thread-safety: {@link #tryElect}, {@link #isVacant}, {@link #flushCount} and {@link #observer} from any thread;
 * {@link #lead} and {@link #stepDown} by the elected leader only.
 */
public final class FlushLeader {
    /** Longest the adaptive gather waits for in-flight records before forcing. */
    private static final long GATHER_MAX_NANOS = TimeUnit.MICROSECONDS.toNanos(50);

    private final Appender appender;
    private final Position flushed;
    private final WalWriteLock writes;
    private final SegmentRegistry registry;
    private final SyncStrategy sync;
    private final ReadNotifier notifier;
    private final CommitBatching batching;
    private final Waiter.Stack waiters;
    private final FlushedWaits async;
    private final LogFailure failure;
    private final AtomicInteger leader = new AtomicInteger();
    private final DeferredRound round = new DeferredRound();
    /**
     * A deferred round was submitted and not yet told: set by the leader before it registers the round, cleared by the
     * thread that tells it; the leader reads it after registering to learn whether the round ended at once.
     */
    private volatile boolean inFlight;
    private volatile FlushObserver observer = FlushObserver.NONE;
    /** Written by the leader only. */
    private volatile long flushCount;

    public FlushLeader(Appender appender, Position flushed, WalWriteLock writes, SegmentRegistry registry, SyncStrategy sync,
                ReadNotifier notifier, CommitBatching batching, Waiter.Stack waiters, FlushedWaits async,
                LogFailure failure) {
        this.appender = appender;
        this.flushed = flushed;
        this.writes = writes;
        this.registry = registry;
        this.sync = sync;
        this.notifier = notifier;
        this.batching = batching;
        this.waiters = waiters;
        this.async = async;
        this.failure = failure;
    }

    public void observer(FlushObserver observer) {
        this.observer = observer == null ? FlushObserver.NONE : observer;
    }

    public long flushCount() {
        return flushCount;
    }

    /** Becomes the leader unless someone is; the winner must then {@link #lead} (or {@link #stepDown}). */
    public boolean tryElect() {
        return leader.get() == 0 && leader.compareAndSet(0, 1);
    }

    /** Whether no one leads: a waiter about to park must not, or no one would wake it. */
    public boolean isVacant() {
        return leader.get() == 0;
    }

    /** Elected leader only, without a flush (a replica's rewind): the next committer may lead. */
    public void stepDown() {
        leader.set(0);
    }

    /**
     * Elected leader only: one flush round, then steps down and tells everyone it satisfied.
     *
     * @param gather whether to wait, boundedly, for the commits the recent load says are coming (see the class comment)
     */
    public void lead(boolean gather) {
        long from = flushed.get();
        try {
            if (gather) {
                batching.awaitExpectedCommits(batching.committers() - 1);
            }
            long target = gather();
            if (target > from && !failure.failed()) {
                long commits = batching.takeRequests();
                long start = System.nanoTime();
                writes.writeForFlush(target);
                forceOrSubmit(null, from, target);
                long nanos = System.nanoTime() - start;
                // Once failed (another writer failed meanwhile), the durable point never moves again.
                if (!failure.failed()) {
                    flushed.set(target); // volatile store: publishes the new durable point to every waiter
                    flushCount++;
                    batching.learn(nanos, batching.committers() + async.outstanding());
                    observer.onFlush(nanos, target - from, commits);
                }
            }
        } catch (Throwable e) {
            // An Error too (an InternalError from a fault in mapped memory, an OutOfMemoryError): whether the force
            // happened is unknown, so the flushed position can never move again. Failing the log releases everyone.
            failure.fail("write and force of " + Lsn.format(from) + " up to the published position failed: " + e, e);
        }
        endRound();
    }

    /**
     * Elected leader only, on a thread that must not block (an event loop), where the log's bytes are made durable
     * by a {@link DeferredSync} (the store journal): the round of {@link #lead lead(false)}, split at the force. This
     * thread gathers, writes the records into the files and {@link DeferredSync#submit submits} them, then returns
     * while still the leader; the thread that makes them durable ends the round ({@link DeferredRound}): it publishes the
     * flushed position, steps down and tells the waiters, as {@link #lead} does after its force. Meanwhile the log has
     * one flush in flight, as during a force: other committers wait for it or ask again later.
     *
     * @param loop where the force is to run, after the tasks the loop has queued ({@link DeferredSync#forceSoon}); null:
     *             on the sync's own thread (a caller with no loop of its own, {@link GroupCommit#flushDeferred})
     * @return true when the round is in flight (it ends on another call); false when it already ended: nothing to
     *         flush, the bytes were durable already, or the log failed
     */
    public boolean leadDeferred(DeferredSync deferred, ScheduledExecutorService loop) {
        long from = flushed.get();
        try {
            long target = gather();
            if (target > from && !failure.failed()) {
                round.commits = batching.takeRequests();
                round.start = System.nanoTime();
                round.from = from;
                round.target = target;
                writes.writeForFlush(target);
                long ticket = forceOrSubmit(deferred, from, target);
                inFlight = true;
                deferred.whenDurable(round, ticket); // may end the round on this thread, now
                deferred.forceSoon(loop);
                return inFlight;
            }
        } catch (Throwable e) {
            failure.fail("write of " + Lsn.format(from) + " up to the published position for the store journal failed: "
                    + e, e);
        }
        endRound();
        return false;
    }

    /** Steps down, then tells everyone the round satisfied: the end of {@link #lead} and of a deferred round. */
    private void endRound() {
        leader.set(0);
        notifier.signal(); // first: a replication sender waiting to ship these bytes is on remote commits' critical path
        // The waiters this flush satisfied (all, if the log failed) are unparked, and one more to lead the next flush.
        waiters.wake(flushed.get(), failure.failed(), true);
        async.drain();
    }

    /**
     * The second half of a deferred round, told by the thread that made its bytes durable. One per log, reused: the
     * leader flag stays taken until it is told, so at most one round is in flight. Its fields are written by the
     * leader before {@link DeferredSync#whenDurable} publishes it (a CAS), and read by the thread that tells it.
     */
    private final class DeferredRound extends Completion {
        long from;
        long target;
        long start;
        long commits;

        @Override
        protected void complete(long ticket) {
            // Once failed (another writer failed meanwhile), the durable point never moves again.
            if (!failure.failed()) {
                long nanos = System.nanoTime() - start;
                flushed.set(target); // volatile store: publishes the new durable point to every waiter
                flushCount++;
                batching.learn(nanos, batching.committers() + async.outstanding());
                observer.onFlush(nanos, target - from, commits);
            }
            end();
        }

        @Override
        protected void fail(Throwable cause) {
            failure.fail("force of " + Lsn.format(from) + " up to " + Lsn.format(target) + " through the store journal failed: "
                    + cause, cause);
            end();
        }

        private void end() {
            inFlight = false;
            endRound();
        }
    }

    /** The flush target: the published position after waiting (boundedly) for records reserved before now. */
    private long gather() {
        long w = appender.advancePublished();
        long reserved = appender.insertPosition();
        if (reserved > w) {
            long deadline = System.nanoTime() + GATHER_MAX_NANOS;
            while (w < reserved && System.nanoTime() < deadline) {
                Thread.onSpinWait();
                w = appender.advancePublished();
            }
        }
        return w;
    }

    /**
     * Each segment's part of {@code [from, to)}: forced in place ({@code deferred} null), or handed to {@code deferred};
     * returns the last ticket {@code deferred} gave (-1 without one).
     */
    private long forceOrSubmit(DeferredSync deferred, long from, long to) throws IOException {
        long ticket = -1;
        long size = registry.segmentSize();
        for (long start = registry.segmentStart(from); start < to; start += size) {
            Segment seg = registry.get(start);
            if (seg == null) {
                throw new IOException("segment " + Lsn.format(start) + " vanished while being flushed");
            }
            long lo = Math.max(from, start) - start;
            long hi = Math.min(to, start + size) - start;
            if (hi <= lo) {
                continue;
            }
            if (deferred == null) {
                sync.force(seg, lo, hi);
            } else {
                ticket = deferred.submit(seg, lo, hi);
            }
        }
        return ticket;
    }
}
