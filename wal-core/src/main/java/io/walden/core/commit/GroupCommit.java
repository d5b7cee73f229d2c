package io.walden.core.commit;

import io.walden.core.Lsn;
import io.walden.core.WalFailedException;
import io.walden.core.segment.Segment;
import io.walden.core.segment.SegmentRegistry;
import io.walden.core.sync.SyncStrategy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Group commit without locks: PostgreSQL's flush leader and WAL write lock, as two flags taken by CAS.
 *
 * <p>A committer whose record is not flushed yet either becomes the leader (one CAS on {@code leader})
 * or waits for the current leader and then re-checks: most committers never force. The leader writes
 * everything published so far from the WAL buffers into the files ({@link LogWriter}), forces it, publishes the
 * new flushed position, steps down, and wakes exactly the waiters it satisfied plus one unsatisfied waiter to
 * lead the next flush. Writes into the files take a separate write lock (PostgreSQL's WALWriteLock, without the
 * force): the leader holds it only while it writes, so that the background writer ({@link #writeAll}) and an
 * appender that needs room in the WAL buffers ({@link #makeRoom}) write while a force is in flight and never wait
 * for a force they do not need.
 *
 * <p>Guarantees:
 * <ul>
 *   <li>At most one flush is in flight ({@code leader} is a mutual-exclusion flag taken by CAS), and at most one
 *       write ({@code writeLock}, the same).</li>
 *   <li>{@code flushed} never exceeds what a completed force covered: the leader samples its target
 *       from the published position (every record below it published, seen through acquire loads), writes up
 *       to it, forces, and only then stores the target (volatile) into {@code flushed}.</li>
 *   <li>A failed force is never retried: the failure is recorded, every waiter and pending future fails,
 *       and so does every later durable append, until the log is reopened.</li>
 * </ul>
 *
 * <p>Batching is adaptive and needs no setting: before sampling its target the leader waits, boundedly, for the
 * commits the recent load says are coming ({@link CommitBatching}), then, briefly, for records already reserved by
 * other appenders to be published (PostgreSQL's WaitXLogInsertionsToFinish).
 *
 * <p>Thread-safety: every public method may be called from any thread.
 */
public final class GroupCommit {
    private static final Logger LOG = LoggerFactory.getLogger(GroupCommit.class);
    private static final int SPIN_TRIES = 64;
    /** Safety net only: a waiter re-checks at least this often even if a wake-up were missed. */
    private static final long PARK_CAP_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** Longest the adaptive gather waits for in-flight records before forcing. */
    private static final long GATHER_MAX_NANOS = TimeUnit.MICROSECONDS.toNanos(50);

    private final Appender appender;
    private final Position published;
    private final LogWriter writer;
    private final Position flushed;
    private final SegmentRegistry registry;
    private final SyncStrategy sync;
    private final ReadNotifier notifier;
    private final AtomicInteger leader = new AtomicInteger();
    /** Held by whoever writes the WAL buffers into the files (one writer at a time: see LogWriter). */
    private final AtomicInteger writeLock = new AtomicInteger();
    private final AtomicInteger committers = new AtomicInteger();
    /** How long a leader waits for the commits it can expect (the adaptive gather and commit_delay). */
    private final CommitBatching batching;
    private final Waiter.Stack waiters = new Waiter.Stack();
    private final ThreadLocal<Waiter> waiterOfThread = ThreadLocal.withInitial(() -> new Waiter(Thread.currentThread()));
    /** Asynchronous waits for the flushed position, told by whoever moves it (see OrderedCompletions). */
    private final OrderedCompletions async = new OrderedCompletions() {
        @Override
        protected long position() {
            return flushed.get();
        }

        @Override
        protected Throwable failure(Completion oldest, long nowNanos) {
            return failure;
        }
    };
    private volatile FlushObserver observer = FlushObserver.NONE;
    private volatile WalFailedException failure;
    /** Written by the leader only. */
    private volatile long flushCount;

    /**
     * @param published the end of the records published in the WAL buffers (moved by the appender)
     * @param written   the end of what the files hold (moved here, by the write before each force)
     */
    public GroupCommit(Appender appender, Position published, Position written, Position flushed, SegmentRegistry registry,
                       SyncStrategy sync, ReadNotifier notifier, long commitDelayNanos, int commitSiblings) {
        this.appender = appender;
        this.published = published;
        this.writer = new LogWriter(registry, appender.ring(), written, notifier, sync.writesThrough());
        this.flushed = flushed;
        this.registry = registry;
        this.sync = sync;
        this.notifier = notifier;
        this.batching = new CommitBatching(commitDelayNanos, commitSiblings);
        appender.bind(this);
    }

    public void observer(FlushObserver observer) {
        this.observer = observer == null ? FlushObserver.NONE : observer;
    }

    public long flushCount() {
        return flushCount;
    }

    public WalFailedException failure() {
        return failure;
    }

    /** Throws the failed state's exception if the log has failed. */
    public void checkNotFailed() {
        WalFailedException f = failure;
        if (f != null) {
            throw new WalFailedException(f.getMessage(), f.getCause());
        }
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
            batching.notePeak(committers.incrementAndGet() + async.outstanding());
        }
        Waiter w = null;
        try {
            int spins = 0;
            while (true) {
                if (flushed.get() > lsn) {
                    return;
                }
                checkNotFailed();
                if (published.get() <= lsn && appender.advancePublished() <= lsn) {
                    backoff(spins++); // this record or an earlier one is still being copied
                    continue;
                }
                if (leader.get() == 0 && leader.compareAndSet(0, 1)) {
                    lead(true);
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
                if (flushed.get() > lsn || failure != null || leader.get() == 0) {
                    continue;
                }
                LockSupport.parkNanos(this, PARK_CAP_NANOS);
            }
        } finally {
            if (commit) {
                committers.decrementAndGet();
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

    /** Registers an asynchronous wait for the record at {@code lsn}; the caller must make sure someone flushes. */
    public CompletableFuture<Long> flushedFuture(long lsn) {
        FutureCompletion f = new FutureCompletion();
        awaitFlushedAsync(f, lsn);
        return f.future;
    }

    /**
     * Registers {@code completion} to be told once the record at {@code lsn} is flushed (at once, on this thread, if it
     * is already); counted as a commit. The caller must make sure someone flushes ({@link #leadIfIdle}, or the
     * background writer).
     */
    public void awaitFlushedAsync(Completion completion, long lsn) {
        batching.commitRequested();
        async.add(completion, lsn);
        batching.notePeak(committers.get() + async.outstanding());
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
        if (failure != null || published.get() <= flushed.get() && appender.advancePublished() <= flushed.get()) {
            async.drain();
            return true;
        }
        if (leader.get() != 0 || !leader.compareAndSet(0, 1)) {
            return false;
        }
        lead(false);
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

    /** Enters the failed state (idempotent) and releases everybody. */
    public void fail(String what, Throwable cause) {
        synchronized (this) {
            if (failure == null) {
                failure = new WalFailedException(what + "; the log refuses appends until it is reopened "
                        + "(a failed force is never retried: its data may already be lost from the page cache)", cause);
                LOG.error("Walden log entered the failed state: {}", failure.getMessage(), cause);
            }
        }
        wakeAll();
        async.drain();
        notifier.signal();
    }

    /** @param gather whether to wait, boundedly, for the commits the recent load says are coming (see the class comment) */
    private void lead(boolean gather) {
        long from = flushed.get();
        try {
            if (gather) {
                batching.awaitExpectedCommits(committers.get() - 1);
            }
            long target = gather();
            if (target > from && failure == null) {
                long commits = batching.takeRequests();
                long start = System.nanoTime();
                write(target);
                force(from, target);
                long nanos = System.nanoTime() - start;
                // Once failed (another writer failed meanwhile), the durable point never moves again.
                if (failure == null) {
                    flushed.set(target); // volatile store: publishes the new durable point to every waiter
                    flushCount++;
                    batching.learn(nanos, committers.get() + async.outstanding());
                    observer.onFlush(nanos, target - from, commits);
                }
            }
        } catch (Throwable e) {
            // An Error too (an InternalError from a fault in mapped memory, an OutOfMemoryError): whether the force
            // happened is unknown, so the flushed position can never move again. Failing the log releases everyone.
            fail("write and force of " + Lsn.format(from) + " up to the published position failed: " + e, e);
        } finally {
            leader.set(0);
        }
        notifier.signal(); // first: a replication sender waiting to ship these bytes is on remote commits' critical path
        wake();
        async.drain();
    }

    /**
     * Whether published records are not in the files yet. Two volatile reads and no scan of the buffers, so that it
     * may be called from outside the log's {@link Activity} (a scan from there could read a buffer being reused).
     */
    public boolean hasUnwritten() {
        return published.get() > writer.writtenLsn();
    }

    /**
     * Writes every published record into the files without forcing them (the background writer, for records nobody
     * waits for: once written they survive the process's death, if not the machine's). Does nothing when someone
     * else is writing. Failing here fails the log, like a force.
     *
     * @return whether this call wrote (false: another writer was busy, or the log is failed)
     */
    public boolean writeAll() {
        if (failure != null || !tryLockWrite()) {
            return false;
        }
        try {
            if (failure != null) {
                return false; // a writer failed while this one waited: nothing is ever written again
            }
            writer.writeUpTo(appender.advancePublished());
        } catch (Throwable e) {
            fail("write of the published records failed: " + e, e);
        } finally {
            writeLock.set(0);
        }
        return true;
    }

    /**
     * For an appender that needs room in the WAL buffers: returns once the files hold everything below {@code lsn},
     * writing the published records itself whenever no one else is writing (PostgreSQL's AdvanceXLInsertBuffer).
     * Never forces. Inside the log's {@link Activity}.
     *
     * @throws WalFailedException when the log is or becomes failed first (then nothing more is ever written, and
     *                            the caller must not store into the ring)
     */
    void makeRoom(long lsn) {
        for (int spins = 0; writer.writtenLsn() < lsn; spins++) {
            checkNotFailed();
            long before = writer.writtenLsn();
            if (tryLockWrite()) {
                try {
                    checkNotFailed(); // a writer failed while this one waited: the ring must not be touched
                    writer.writeUpTo(appender.advancePublished());
                } catch (WalFailedException e) {
                    throw e;
                } catch (Throwable e) {
                    fail("write of the published records failed: " + e, e);
                } finally {
                    writeLock.set(0);
                }
                if (writer.writtenLsn() > before) {
                    continue; // progress: look again at once
                }
            }
            backoff(spins); // the record in the way is still being copied, or someone else is writing
        }
    }

    /**
     * Leader only: writes up to {@code target} unless someone already did, waiting for a writer that holds the lock
     * (it writes, never forces).
     *
     * @throws WalFailedException when another writer failed meanwhile (the target may not be in the files)
     */
    private void write(long target) throws IOException {
        for (int spins = 0; writer.writtenLsn() < target; spins++) {
            if (!tryLockWrite()) {
                backoff(spins);
                continue;
            }
            try {
                checkNotFailed();
                writer.writeUpTo(target);
            } finally {
                writeLock.set(0);
            }
        }
    }

    /**
     * Moves every position back to {@code lsn} (a replica's rewind, see ReplicatedLog.rewindTo): with the leader flag and the
     * write lock held, so that no flush or write can move a position past it meanwhile. Everything must be flushed
     * before (the ring holds nothing unwritten), and nothing may be appended meanwhile (the log refuses appends).
     */
    public void rewindPositions(long lsn, Position tail) {
        for (int spins = 0; leader.get() != 0 || !leader.compareAndSet(0, 1); spins++) {
            backoff(spins);
        }
        try {
            for (int spins = 0; !tryLockWrite(); spins++) {
                backoff(spins);
            }
            try {
                flushed.set(lsn);
                writer.rewind(lsn);
                published.set(lsn);
                tail.set(lsn);
            } finally {
                writeLock.set(0);
            }
        } finally {
            leader.set(0);
        }
    }

    private boolean tryLockWrite() {
        return writeLock.get() == 0 && writeLock.compareAndSet(0, 1);
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

    private void force(long from, long to) throws IOException {
        long size = registry.segmentSize();
        for (long start = registry.segmentStart(from); start < to; start += size) {
            Segment seg = registry.get(start);
            if (seg == null) {
                throw new IOException("segment " + Lsn.format(start) + " vanished while being flushed");
            }
            long lo = Math.max(from, start) - start;
            long hi = Math.min(to, start + size) - start;
            if (hi > lo) {
                sync.force(seg, lo, hi);
            }
        }
    }

    /** Unparks the waiters this flush satisfied (all, if the log failed), and one more to lead the next flush. */
    private void wake() {
        waiters.wake(flushed.get(), failure != null, true);
    }

    private void wakeAll() {
        waiters.wakeAll();
    }

    private static void backoff(int spins) {
        if (spins < 100) {
            Thread.onSpinWait();
        } else if (spins < 200) {
            Thread.yield();
        } else {
            LockSupport.parkNanos(1_000);
        }
    }
}
