package io.walden.core.internal.commit;

import io.walden.core.WalFailedException;
import io.walden.core.internal.segment.SegmentRegistry;
import io.walden.core.internal.sync.SyncStrategy;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Group commit without locks: PostgreSQL's flush leader and WAL write lock, as two flags taken by CAS. This class is
 * the committers' side and the log's single entry point to it; each other part is a class of its own:
 * <ul>
 *   <li>{@link FlushLeader}: the leader's flush round (gather, write, force, publish the flushed position, step
 *       down, wake exactly the waiters it satisfied plus one to lead the next flush);</li>
 *   <li>{@link WalWriteLock}: who writes the WAL buffers into the files ({@link LogWriter}), and when: the leader
 *       before its force, the background writer ({@link #writeAll}), an appender that needs room in the ring;</li>
 *   <li>{@link LogFailure}: the failed state, never left: a failed write or force is never retried;</li>
 *   <li>{@link FlushedWaits}: asynchronous waits for the flushed position; {@link CommitBatching}: how long a leader
 *       waits for the commits it can expect.</li>
 * </ul>
 *
 * <p>Guarantees:
 * <ul>
 *   <li>A committer whose record is not flushed yet either becomes the leader or waits for the current one and then
 *       re-checks, so most committers never force; it returns only once {@code flushed} passed its record, which
 *       happens only after a completed force covered it ({@link FlushLeader}), or throws once the log failed.</li>
 *   <li>No lost wake-up: a waiter pushes itself, then re-reads the flushed position, the failed state and the leader
 *       flag before it parks; whoever moves the flushed position (and steps down) or enters the failed state does so
 *       before it pops the waiters.</li>
 *   <li>At most one flush and at most one write are in flight (the two flags).</li>
 * </ul>
 *
 * <p>Thread-safety: every public method may be called from any thread.
 */
public final class GroupCommit {
    private static final int SPIN_TRIES = 64;
    /** Safety net only: a waiter re-checks at least this often even if a wake-up were missed. */
    private static final long PARK_CAP_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final Appender appender;
    private final Position published;
    private final Position flushed;
    /** How long a leader waits for the commits it can expect (the adaptive gather and commit_delay). */
    private final CommitBatching batching;
    private final Waiter.Stack waiters = new Waiter.Stack();
    private final ThreadLocal<Waiter> waiterOfThread = ThreadLocal.withInitial(() -> new Waiter(Thread.currentThread()));
    /** Asynchronous waits for the flushed position, told by whoever moves it (see OrderedCompletions). */
    private final FlushedWaits async;
    private final LogFailure failure;
    private final WalWriteLock writes;
    private final FlushLeader leader;
    /** The log's sync when it can hand its bytes over and be told later (a store's log), else null. */
    private final DeferredSync deferred;

    /**
     * @param published the end of the records published in the WAL buffers (moved by the appender)
     * @param written   the end of what the files hold (moved by the writes into the files, {@link WalWriteLock})
     */
    public GroupCommit(Appender appender, Position published, Position written, Position flushed, SegmentRegistry registry,
                       SyncStrategy sync, ReadNotifier notifier, long commitDelayNanos, int commitSiblings) {
        this.appender = appender;
        this.published = published;
        this.flushed = flushed;
        this.batching = new CommitBatching(commitDelayNanos, commitSiblings);
        this.failure = new LogFailure(waiters, notifier);
        this.async = new FlushedWaits(flushed, failure);
        failure.bind(async); // each needs the other: failing fails the waits, and a wait asks whether the log failed
        this.writes = new WalWriteLock(appender, published, written, registry, sync, notifier, failure);
        this.deferred = sync instanceof DeferredSync d ? d : null;
        this.leader = new FlushLeader(appender, flushed, writes, registry, sync, notifier, batching, waiters, async,
                failure);
        appender.bind(failure, writes);
    }

    public void observer(FlushObserver observer) {
        leader.observer(observer);
    }

    public long flushCount() {
        return leader.flushCount();
    }

    public WalFailedException failure() {
        return failure.get();
    }

    /** Throws the failed state's exception if the log has failed. */
    public void checkNotFailed() {
        failure.check();
    }

    /**
     * Blocks until the record at {@code lsn} is flushed ({@code flushed > lsn}).
     *
     * @throws WalFailedException when the log is or becomes failed first
     */
    public void awaitFlushed(long lsn) {
        awaitFlushed(lsn, true);
    }

    /**
     * @param commit whether the caller is a commit of its own (false for the background writer flushing for
     *               pending futures, which are counted already: counting it too would make the leader wait for a
     *               second commit that never comes, up to half a flush, on every asynchronous commit)
     */
    private void awaitFlushed(long lsn, boolean commit) {
        if (flushed.get() > lsn) {
            return;
        }
        if (commit) {
            batching.notePeak(batching.committerBlocks() + async.outstanding());
        }
        Waiter w = null;
        try {
            int spins = 0;
            while (true) {
                if (flushed.get() > lsn) {
                    return;
                }
                failure.check();
                if (published.get() <= lsn && appender.advancePublished() <= lsn) {
                    Backoff.pause(spins++); // this record or an earlier one is still being copied
                    continue;
                }
                if (leader.tryElect()) {
                    leader.lead(true);
                    continue;
                }
                if (spins++ < SPIN_TRIES) {
                    Thread.onSpinWait();
                    continue;
                }
                if (w == null) {
                    w = waiterOfThread.get();
                    w.target = lsn;
                    w.waiting = true;
                }
                if (!w.inStack) {
                    w.inStack = true;
                    waiters.push(w);
                }
                // Re-check after being visible to the leader: a flush that finished before the push is seen here.
                if (flushed.get() > lsn || failure.failed() || leader.isVacant()) {
                    continue;
                }
                LockSupport.parkNanos(this, PARK_CAP_NANOS);
            }
        } finally {
            if (commit) {
                batching.committerReturns();
            }
            if (w != null) {
                w.waiting = false;
            }
        }
    }

    /** {@link #awaitFlushed} for a durable append: also counted as a commit for the commits-per-flush figure. */
    public void awaitCommit(long lsn) {
        batching.commitRequested();
        awaitFlushed(lsn);
    }

    /**
     * Registers {@code completion} to be told once the record at {@code lsn} is flushed (at once, on this thread, if it
     * is already); counted as a commit. The caller must make sure someone flushes ({@link #leadIfIdle}, or the
     * background writer).
     */
    public void awaitFlushedAsync(Completion completion, long lsn) {
        batching.commitRequested();
        async.add(completion, lsn);
        batching.notePeak(batching.committers() + async.outstanding());
        async.drain();
    }

    /** Whether asynchronous waits for the flushed position remain (after a drain: their records are not flushed). */
    public boolean hasAsyncWaits() {
        return async.outstanding() > 0;
    }

    /**
     * Flushes now, on this thread, unless a flush is in progress: one write and force of everything published, then
     * the asynchronous waits it satisfied are told (on this thread). No waiting for other commits to gather first:
     * the caller (an event loop at the end of a batch of reads) has gathered what it could.
     *
     * @return false when another thread was flushing (its flush, or the one after it, covers the caller's records
     *         only if someone asks for it: the caller then wakes the background writer)
     */
    public boolean leadIfIdle() {
        if (failure.failed() || published.get() <= flushed.get() && appender.advancePublished() <= flushed.get()) {
            async.drain();
            return true;
        }
        if (!leader.tryElect()) {
            return false;
        }
        leader.lead(false);
        return true;
    }

    /**
     * {@link #leadIfIdle} for a thread that must not block but gathers its siblings all the same (an event loop that
     * flushes its own batches, with other loops appending beside it): flushes now, on this thread, once that serves
     * the commits the log expects ({@link CommitBatching#gatherRemainingNanos}), and otherwise says when to ask again.
     * Never waits, and never hands the flush to the background writer: every caller with a commit of its own waiting
     * asks again until this returns 0, so the records are flushed by one of them.
     *
     * @return 0 when no asynchronous wait is left for a flush (this thread flushed them, another did, or the log
     *         failed and told them so); otherwise the nanoseconds after which to call again: the rest of the gather,
     *         a flush in progress elsewhere, records still being copied in, or commits that asked during this flush
     */
    public long leadWhenGathered() {
        return leadWhenGathered(null);
    }

    /**
     * {@link #leadWhenGathered()} for an event loop, {@code loop}: where the log's bytes go through a {@link DeferredSync}
     * (a store's log), its flush does not wait for the force: the round ends on the thread that forces, which the
     * sync runs on {@code loop} after the tasks queued on it now ({@link FlushLeader#leadDeferred}). So a loop that
     * appended to many logs in one batch of reads flushes each and forces the journal once for all of them.
     *
     * @param loop null: the round waits for its force on this thread, as {@link #leadWhenGathered()}
     * @return as {@link #leadWhenGathered()}; 0 once a deferred round is in flight that covers every wait this thread
     *         could have added (its records were published before the round sampled its target): the round's end tells
     *         them, and a wait added after it asks again through its own loop
     */
    public long leadWhenGathered(ScheduledExecutorService loop) {
        if (failure.failed()) {
            async.drain();
            return 0;
        }
        if (published.get() <= flushed.get() && appender.advancePublished() <= flushed.get()) {
            async.drain();
            // What still waits is for a record another thread is copying in: look again once it is published.
            return async.outstanding() > 0 ? CommitBatching.MIN_RECHECK_NANOS : 0;
        }
        long gather = batching.gatherRemainingNanos();
        if (gather > 0) {
            return gather;
        }
        if (!leader.tryElect()) {
            return batching.flushInProgressRecheckNanos();
        }
        if (deferred == null || loop == null) {
            leader.lead(false);
        } else if (leader.leadDeferred(deferred, loop)) {
            return 0; // in flight: its end tells the waits it covers
        }
        // Commits that asked during this flush: their gather began with the first of them, maybe long enough ago.
        return async.outstanding() > 0 ? Math.max(1, batching.gatherRemainingNanos()) : 0;
    }

    /**
     * Flushes everything published now without waiting for the force, for a thread that must neither block in it nor
     * run it later (a replica's receiver, which many logs share): {@code completion} is told once it is flushed, or
     * failed, on the thread that made it so. Where the log's bytes go through a {@link DeferredSync} (a store's log),
     * this thread leads a deferred round unless a flush is in progress, and the sync's own thread forces it
     * ({@link DeferredSync#forceSoon forceSoon(null)}), with whatever other logs submitted meanwhile: one
     * {@code fdatasync} for the rounds of every log. A log of its own has no one to share a force with: this thread
     * flushes it as a blocking flush would, and the completion is told before this returns (its end then costs the
     * caller no hand-over between threads). Not counted as a commit.
     *
     * @return true when the completion is sure to be told (told already, or a round in flight covers it); false when
     *         someone must still flush for it (a flush that began before these records was in progress): the caller
     *         wakes the background writer, whose flush tells it
     */
    public boolean flushDeferred(Completion completion) {
        long target = appender.advancePublished();
        async.add(completion, target - 1);
        async.drain();
        if (failure.failed() || target <= flushed.get()) {
            return true;
        }
        if (deferred == null) {
            try {
                flushAll();
            } catch (WalFailedException e) {
                // the log failed: the completion was told so
            }
            return true;
        }
        if (!leader.tryElect()) {
            return false;
        }
        leader.leadDeferred(deferred, null); // its end (here, or on the forcing thread) tells the completion
        return true;
    }

    /** Completes pending futures that are flushed (or fails them all if the log failed). */
    public void completeAsync() {
        async.drain();
    }

    /**
     * Flushes everything written so far, leading if no one else is; used by the background writer and close.
     *
     * @throws WalFailedException when the log is failed
     */
    public void flushAll() {
        long w = appender.advancePublished();
        if (w > flushed.get()) {
            awaitFlushed(w - 1, false);
        }
        completeAsync();
    }

    /** Enters the failed state (idempotent) and releases everybody ({@link LogFailure}). */
    public void fail(String what, Throwable cause) {
        failure.fail(what, cause);
    }

    /** Whether published records are not in the files yet ({@link WalWriteLock#hasUnwritten}). */
    public boolean hasUnwritten() {
        return writes.hasUnwritten();
    }

    /** Whether the record at {@code lsn} is published and not yet wholly in the files ({@link WalWriteLock#isUnwritten}). */
    public boolean isUnwritten(long lsn) {
        return writes.isUnwritten(lsn);
    }

    /**
     * Writes every published record into the files without forcing them, unless someone else is writing; for the
     * background writer ({@link WalWriteLock#writeAll}). Failing here fails the log, like a force.
     *
     * @return whether this call wrote (false: another writer was busy, or the log is failed)
     */
    public boolean writeAll() {
        return writes.writeAll();
    }

    /** Takes the WAL write lock: no write into the files (nor read of the ring) until {@link #unlockWrites} (IdleRing). */
    public void lockWrites() {
        writes.lock();
    }

    public void unlockWrites() {
        writes.unlock();
    }

    /**
     * Moves every position back to {@code lsn} (a replica's rewind, see ReplicatedLog.rewindTo): with the leader flag and the
     * write lock held, so that no flush or write can move a position past it meanwhile. Everything must be flushed
     * before (the ring holds nothing unwritten), and nothing may be appended meanwhile (the log refuses appends).
     */
    public void rewindPositions(long lsn, Position insert) {
        for (int spins = 0; !leader.tryElect(); spins++) {
            Backoff.pause(spins);
        }
        try {
            writes.lock();
            try {
                flushed.set(lsn);
                writes.rewindWritten(lsn);
                published.set(lsn);
                insert.set(lsn);
            } finally {
                writes.unlock();
            }
        } finally {
            leader.stepDown();
        }
    }
}
