package io.walden.core.internal;

import io.walden.core.internal.commit.Activity;
import io.walden.core.internal.commit.GroupCommit;
import io.walden.core.internal.commit.Position;
import io.walden.core.internal.commit.WalBuffers;
import io.walden.core.internal.commit.WalBuffersBudget;
import io.walden.core.internal.record.RecordDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Gives an idle log's WAL buffers back to the operating system, so that a store of a thousand logs holds memory for
 * the logs that append, not for every log it ever opened (issue #36: "a log takes what its appends need and gives it
 * back"). The ring stays allocated; its pages are returned ({@link WalBuffers#releasePages}) and come back, zeroed, at
 * the next touch: an idle log costs nothing but its address range.
 *
 * <p>Why it is safe: once everything appended is written into the files ({@code insert == published == written}),
 * every byte of the ring is zero but the next record's header words written ahead at the end (the {@link WalBuffers}
 * invariant), which are checked, kept and put back. While it works nobody touches the ring: it
 * {@link Activity#pause pauses} the log's activity, so that every thread entering the log (appends, claims, control
 * records, flushes, a replica's applier, a rewind) waits outside; waits for everyone inside to leave (a grace period,
 * as truncation's; it gives up after {@link #GRACE_NANOS} and tries at a later tick); enters itself, so that
 * {@code close()} waits for it before it frees the ring, and sees the log still open; and holds the WAL write lock. An
 * idle log's appender waits a few milliseconds, once.
 *
 * <p><b>In a store with a budget of WAL buffers</b> ({@link WalBuffersBudget}) the log holds its ring's bytes of the
 * budget only while awake. It opens dormant, and goes dormant again whenever its ring goes back, at its idle tick or
 * when a log that wakes asks it to make room ({@link #giveBack}); the next thread that enters it to append wakes it
 * ({@link Activity#sleep}), taking the bytes again, waiting for them if the budget is short.
 *
 * <p>Thread-safety: {@link #tick} from the background writer's checkpoint, outside the log's activity; {@link #trim}
 * and {@link #giveBack} from there, a waking log's thread or a test, one at a time (the monitor); waking from threads
 * entering the log, one at a time ({@code wakeLock}), never under the monitor.
 */
public final class IdleRing implements WalBuffersBudget.Holder {
    private static final Logger LOG = LoggerFactory.getLogger(IdleRing.class);
    /** Longest the trim waits for those inside the log to leave before it gives up (and tries again later). */
    private static final long GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** As {@link #GRACE_NANOS}, when another log waits to wake: a log whose appenders stay inside is busy, not quiet. */
    private static final long GIVE_BACK_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    /** The words at the end that may be written ahead (the next record's header): kept and put back. */
    private static final int AHEAD = RecordDescriptor.TIMED_HEADER_LENGTH;
    /** On the heap: a direct buffer made at a first trim would look like a leak of direct memory to a process's measure. */
    private static final ByteBuffer ZEROS = ByteBuffer.allocate(64 << 10).asReadOnlyBuffer();

    private final WalBuffers ring;
    private final Position insert;
    private final Position published;
    private final Position written;
    private final Position flushed;
    private final Activity activity;
    private final GroupCommit commit;
    /** Whether the log is closed: close() frees the ring, so a closed log's is never touched here. */
    private final WritePath writes;
    /** Parks the segments the log writes into, while nobody is inside (WalParts#parkSegmentsWhileQuiescent). */
    private final Runnable segmentParking;
    /** The log's directory: its name to the budget, and in the message. */
    private final Path dir;
    /** The store's budget of WAL buffers, or null (a log of its own: its ring is its own, never dormant). */
    private final WalBuffersBudget budget;
    /** How long the log's end must stay where it is before its WAL buffers go back (WalConfig#idleAfter). */
    private final long idleNanos;
    /** One waking thread at a time; the others wait for it (they enter once it woke the log). */
    private final ReentrantLock wakeLock = new ReentrantLock();
    /** The end seen at the last tick (background writer only). */
    private long lastEnd = -1;
    /** Since when the end stayed where it is (System.nanoTime): set at each tick that saw it move, and at waking. */
    private volatile long sameSince = System.nanoTime();
    /** The end at which the ring was last returned: not again until the log moved or woke. */
    private volatile long trimmedAt = -1;
    private volatile long trims;

    /**
     * @param ring           the WAL buffers, and below the ends appenders and the flush leader move in them
     * @param budget         the store's budget of WAL buffers, or null (a log of its own)
     * @param segmentParking parks the segments the log writes into (called while nobody is inside)
     * @param idleNanos      how long the log's end must stay where it is before the ring goes back
     */
    IdleRing(WalBuffers ring, Position insert, Position published, Position written, Position flushed, Activity activity,
             GroupCommit commit, WritePath writes, WalBuffersBudget budget, Runnable segmentParking, Path dir,
             long idleNanos) {
        this.flushed = flushed;
        this.ring = ring;
        this.insert = insert;
        this.published = published;
        this.written = written;
        this.activity = activity;
        this.commit = commit;
        this.writes = writes;
        this.budget = budget;
        this.segmentParking = segmentParking;
        this.dir = dir;
        this.idleNanos = idleNanos;
        if (budget != null) {
            activity.wakeWith(waker);
        }
    }

    /**
     * In a store with a budget: the log opens dormant, holding none of it (recovery touched a page or two of its ring:
     * no more). Once started, before anyone else enters the log.
     */
    void sleepAtOpen() {
        if (budget != null) {
            trimmedAt = insert.get();
            activity.sleep();
        }
    }

    /**
     * An entering thread found the log dormant: takes the ring's bytes of the budget (waiting while they do not fit),
     * then wakes it. A log closed meanwhile wakes holding nothing: the entry is then refused as closed.
     */
    private final Activity.Waker waker = new Activity.Waker() {
        @Override
        public void wake() {
            wakeLock.lock();
            try {
                if (activity.isDormant()) { // else another thread woke it
                    woke(budget.acquire(IdleRing.this, this::cancelled));
                }
            } finally {
                wakeLock.unlock();
            }
        }

        @Override
        public boolean tryWake() {
            if (!wakeLock.tryLock()) {
                return false; // another thread is waking it, and may wait
            }
            try {
                if (!activity.isDormant()) {
                    return true;
                }
                if (cancelled()) {
                    woke(false); // refused at once, as closed or failed
                    return true;
                }
                if (!budget.tryAcquire(IdleRing.this)) {
                    return false;
                }
                woke(true);
                return true;
            } finally {
                wakeLock.unlock();
            }
        }

        /** A closed or failed log takes nothing: the entry wakes it only to be refused. */
        private boolean cancelled() {
            return writes.isClosed() || commit.failure() != null;
        }

        private void woke(boolean holding) {
            if (holding) {
                sameSince = System.nanoTime();
                trimmedAt = -1; // a log that wakes and never moves goes dormant again at its idle tick
                if (writes.isClosed()) {
                    budget.release(IdleRing.this); // close() gave back before this took: take nothing past close
                }
            }
            activity.wake();
        }
    };

    /** The log is closing (its writes refused already): what it holds of the budget goes back. */
    void close() {
        if (budget != null) {
            budget.release(this);
            // Threads that entered the log keep its Activity in a thread-local (its cell) for as long as they live: the
            // activity must not keep this log's parts reachable through its waker once the log is closed.
            activity.wakeWith(null);
        }
    }

    @Override
    public long ringBytes() {
        return ring.size();
    }

    @Override
    public long quietSince() {
        return sameSince;
    }

    @Override
    public String name() {
        return dir.toString();
    }

    /** Another log wakes and the budget is short: the ring goes back now if this log is quiet (see the class). */
    @Override
    public synchronized boolean giveBack() {
        // Not a log someone is inside of now: pausing it would hold its appenders outside for the grace, for nothing.
        return !activity.anyoneInside() && trim(GIVE_BACK_GRACE_NANOS, false);
    }

    /** Whether {@code thread} is inside the log now (a waking thread inside a log that holds the budget). */
    @Override
    public boolean hasInside(Thread thread) {
        return activity.isInside(thread);
    }

    /** Whether the log's end stayed where it is for the idle period at the last {@link #tick} (background writer). */
    boolean isIdle() {
        return lastEnd >= 0 && System.nanoTime() - sameSince >= idleNanos;
    }

    /** How many times the ring's pages went back. */
    public long trims() {
        return trims;
    }

    /** The background writer's periodic turn: returns the ring once the log's end stayed put for the idle period. */
    void tick() {
        long end = insert.get();
        long now = System.nanoTime();
        if (end != lastEnd) {
            lastEnd = end;
            sameSince = now;
            return;
        }
        if (activity.isDormant()) {
            return;
        }
        if (end != trimmedAt && now - sameSince >= idleNanos) {
            trim();
        }
    }

    /**
     * Returns the ring's pages if everything appended is in the files and nobody is inside the log within a grace
     * period; false when it did not (someone appended, or stayed inside, or the ring was not as the invariant says).
     */
    public synchronized boolean trim() {
        return trim(GRACE_NANOS, true);
    }

    /** {@link #trim}, waiting up to {@code graceNanos} for those inside; with the segments too when asked. */
    private boolean trim(long graceNanos, boolean parkSegments) {
        long end = insert.get();
        if (writes.isClosed() || activity.isDormant() || published.get() != end || written.get() != end) {
            return false;
        }
        boolean dormant = false;
        activity.pause();
        try {
            Activity.Snapshot inside = activity.snapshot();
            long deadline = System.nanoTime() + graceNanos;
            while (!activity.passed(inside)) {
                if (System.nanoTime() - deadline > 0) {
                    return false;
                }
                LockSupport.parkNanos(this, 50_000);
            }
            Activity.Cell self = activity.cell();
            Activity.enterWhilePaused(self);
            try {
                if (writes.isClosed()) {
                    return false; // close() came first: it frees the ring once nobody is inside
                }
                commit.lockWrites();
                try {
                    if (insert.get() == end && published.get() == end && written.get() == end && settled(end)
                            && release(end)) {
                        if (parkSegments) {
                            segmentParking.run(); // and the segments it writes into: nobody is inside
                        }
                        trimmedAt = end; // before it can wake: a wake sets it back
                        dormant = budget != null;
                        return true;
                    }
                    return false;
                } finally {
                    commit.unlockWrites();
                }
            } finally {
                Activity.exit(self);
            }
        } finally {
            if (dormant) {
                // The bytes go back while the log is still paused (nobody enters, nobody wakes it), then it sleeps: a
                // wake between the two would find the log still counted awake, take nothing, and then lose its count.
                budget.release(this);
                activity.sleep();
            } else {
                activity.resume();
            }
        }
    }

    /**
     * In a store with a budget, whether nothing can still come into the log while it sleeps: every record is forced
     * and no asynchronous commit waits. A flush entering a dormant log does not wake it ({@link Activity#enterToFlush}),
     * so the commit callbacks it would run (which may append) must have none to run.
     */
    private boolean settled(long end) {
        return budget == null || (flushed.get() == end && !commit.hasAsyncWaits());
    }

    /** Keeps the words written ahead at the end, returns the pages, puts the words back. */
    private boolean release(long end) {
        long at = ring.offset(end);
        int ahead = (int) Math.min(AHEAD, ring.size() - at);
        if (!zeroBut(at, ahead)) {
            LOG.warn("Not returning the WAL buffers of the log in {}: they hold bytes past its end {} (a bug: please "
                    + "report it)", dir, end);
            return false;
        }
        long[] words = new long[ahead / Long.BYTES];
        for (int i = 0; i < words.length; i++) {
            words[i] = ring.readLong(at + (long) i * Long.BYTES);
        }
        boolean released = ring.releasePages();
        for (int i = 0; i < words.length; i++) {
            ring.writeLong(at + (long) i * Long.BYTES, words[i]);
        }
        if (released) {
            trims++;
        }
        return released;
    }

    /** Whether every byte of the ring is zero outside {@code [at, at + ahead)}. */
    private boolean zeroBut(long at, int ahead) {
        ByteBuffer view = ring.newView();
        return isZero(view, 0, (int) at) && isZero(view, (int) (at + ahead), (int) ring.size());
    }

    private static boolean isZero(ByteBuffer view, int from, int to) {
        for (int p = from; p < to; ) {
            int n = Math.min(ZEROS.capacity(), to - p);
            if (view.slice(p, n).mismatch(ZEROS.slice(0, n)) >= 0) {
                return false;
            }
            p += n;
        }
        return true;
    }
}
