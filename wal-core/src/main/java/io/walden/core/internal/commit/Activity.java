package io.walden.core.internal.commit;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Who is inside the log right now: every thread that appends, commits, claims or flushes brackets that work
 * with {@link #enter} and {@link #exit} on its own {@link Cell}, so that (a) {@code close()} can wait until
 * no one is inside before it unmaps anything, and (b) truncation can wait for a grace period (every thread
 * inside when a segment was removed has left since) before the segment is unmapped — quiescent-state based
 * reclamation, as RCU does. Appender-side code reads segments by raw address, so it must never see one
 * unmapped.
 *
 * <p>Cost on the hot path: one volatile store on entry (the StoreLoad fence that pairs with close()'s store
 * of the closed flag, Dekker style) and one release store on exit, both on a line only that thread writes.
 *
 * <p>Thread-safety: {@link #enter}/{@link #exit} only by the cell's owner; the rest from any thread.
 */
public final class Activity {
    private static final VarHandle SEQ;

    static {
        try {
            SEQ = MethodHandles.lookup().findVarHandle(Cell.class, "seq", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** One thread's activity: {@code seq} is odd while the thread is inside. Padded: written on every append. */
    public static final class Cell {
        long p1, p2, p3, p4, p5, p6, p7;
        volatile long seq;
        long q1, q2, q3, q4, q5, q6, q7;
        /** Nesting depth, owner-only (an append's commit wait may lead a flush: still one activity). */
        int depth;
        private final WeakReference<Thread> owner = new WeakReference<>(Thread.currentThread());
        /**
         * The activity's pause flag, reached without a load of the activity (one less dependent load per entry). The
         * cell holds nothing else of its log: a thread keeps its cell in a thread-local for as long as it lives, and a
         * cell that reached the activity would keep the thread-local's key, and so every closed log's activity and
         * everything its waker reaches, alive in every thread that ever entered it.
         */
        private final PauseFlag pause;

        Cell(PauseFlag pause) {
            this.pause = pause;
        }

        boolean ownerGone() {
            Thread t = owner.get();
            return t == null || !t.isAlive();
        }
    }

    /** The cells inside at some moment, with the sequence each had then. */
    public static final class Snapshot {
        private final Cell[] cells;
        private final long[] seqs;

        private Snapshot(Cell[] cells, long[] seqs) {
            this.cells = cells;
            this.seqs = seqs;
        }
    }

    private final List<Cell> cells = new CopyOnWriteArrayList<>();
    private final ThreadLocal<Cell> cellOfThread = ThreadLocal.withInitial(this::register);

    /**
     * Set while the log's WAL buffers go back to the system (IdleRing): a thread entering waits outside until it clears;
     * and, in a store with a budget of WAL buffers, left {@link #DORMANT} afterwards, until an entering thread wakes it.
     * Read on every entry, after the entry's volatile store, so that the pauser (which stores this, then reads every
     * cell) and an entering thread see each other (Dekker). Padded: read by every append, it must not share a cache
     * line with anything an append writes (the log's counters are allocated right beside this object). Unpadded, 16
     * LOCAL committers measured 0.75 × the build before the flag; padded, 1.13 × (compare-builds.sh, three rounds
     * each; the disk's minutes swing that much too, so the padding is the safe side rather than a proven cause).
     */
    private final PauseFlag pause = new PauseFlag();
    /** The values of the pause flag: open; paused (entries wait); dormant (entries but flushes wake the log). */
    static final long OPEN = 0, PAUSED = 1, DORMANT = 2;

    /**
     * A flag alone on its cache line (Cell's padding: longs are laid out in the order declared), and what an entry that
     * finds it set does: wait out a pause, or wake a dormant log.
     */
    static final class PauseFlag {
        long p1, p2, p3, p4, p5, p6, p7;
        volatile long paused;
        long q1, q2, q3, q4, q5, q6, q7;
        /** The waker of a log without a budget: nothing to take, the flag just opens. */
        final Waker own = new Waker() {
            @Override
            public void wake() {
                wakeUp();
            }

            @Override
            public boolean tryWake() {
                wakeUp();
                return true;
            }
        };
        /** Read only by entries that find the flag set (after the padding: an object field is laid out after longs). */
        volatile Waker waker = own;

        void wakeUp() {
            if (paused == DORMANT) {
                paused = OPEN;
            }
        }

        /**
         * Waits outside while the flag says paused; wakes a dormant log when {@code wake} (through the waker, or, when
         * {@code mayWait} is false, only if its WAL buffers fit now). False, with the entry undone, when a log that
         * must not be waited for stays dormant.
         */
        boolean waitOut(Cell c, boolean wake, boolean mayWait) {
            long p;
            while ((p = paused) == PAUSED || (wake && p == DORMANT)) {
                SEQ.setRelease(c, c.seq + 1); // outside while waiting: the pauser waits for those inside
                if (p == DORMANT) {
                    boolean woke = true;
                    try {
                        if (mayWait) {
                            waker.wake(); // outside: waking may wait for other logs to give WAL buffers back
                        } else {
                            woke = waker.tryWake();
                        }
                    } catch (Throwable e) {
                        c.depth--; // outside, as it is: the entry did not happen
                        throw e;
                    }
                    if (!woke) {
                        c.depth--;
                        return false;
                    }
                }
                for (int spins = 0; paused == PAUSED; spins++) {
                    if (spins < 100) {
                        Thread.onSpinWait();
                    } else {
                        LockSupport.parkNanos(this, 20_000);
                    }
                }
                c.seq = c.seq + 1; // inside again, then look at the flag once more
            }
            return true;
        }
    }

    private Cell register() {
        Cell c = new Cell(pause);
        cells.add(c);
        return c;
    }

    public Cell cell() {
        return cellOfThread.get();
    }

    /**
     * Marks the owner inside; a volatile store, so a later read of a closed flag cannot pass it. A thread that was not
     * inside yet waits, outside, while the activity is {@link #pause paused} (a few milliseconds, on an idle log).
     */
    public static void enter(Cell c) {
        if (c.depth++ == 0) {
            c.seq = c.seq + 1; // volatile store: odd = inside
            if (c.pause.paused != OPEN) {
                c.pause.waitOut(c, true, true);
            }
        }
    }

    /**
     * {@link #enter} for a caller that must not wait (NonWaitingAppends): false, outside, when the log is dormant and
     * cannot wake without waiting (its WAL buffers do not fit in the store's budget now). It still waits out a pause
     * (a few milliseconds, on an idle log), as it always did.
     */
    public static boolean tryEnter(Cell c) {
        if (c.depth++ == 0) {
            c.seq = c.seq + 1;
            if (c.pause.paused != OPEN) {
                return c.pause.waitOut(c, true, false);
            }
        }
        return true;
    }

    /**
     * {@link #enter} for a flush, which touches the WAL buffers only where records wait in them: it waits out a pause
     * but does not {@link #sleep wake} a dormant log (whose buffers hold nothing), so that the background writer's
     * periodic flush of an idle log leaves it asleep.
     */
    public static void enterToFlush(Cell c) {
        if (c.depth++ == 0) {
            c.seq = c.seq + 1;
            if (c.pause.paused == PAUSED) {
                c.pause.waitOut(c, false, true);
            }
        }
    }

    /**
     * Holds every thread that enters from now on outside (see {@link #enter}), until {@link #resume}; those inside
     * stay. With a grace period ({@link #snapshot}, {@link #passed}) the pauser then knows nobody is inside but itself
     * ({@link #enterWhilePaused}). One pauser at a time.
     */
    public void pause() {
        pause.paused = PAUSED;
    }

    /** Ends a {@link #pause}: those waiting enter. */
    public void resume() {
        pause.paused = OPEN;
    }

    /**
     * Ends a {@link #pause} with the log dormant: its WAL buffers went back, and the next thread that enters to touch
     * them (any entry but {@link #enterToFlush}) first has the {@link Waker} take them again.
     */
    public void sleep() {
        pause.paused = DORMANT;
    }

    /** Whether the log is {@link #sleep dormant}. */
    public boolean isDormant() {
        return pause.paused == DORMANT;
    }

    /** Wakes a dormant log: those waiting enter. The waker's, once it holds what the log needs. */
    public void wake() {
        pause.wakeUp();
    }

    /**
     * Who wakes a {@link #sleep dormant} log: set once, before the log first sleeps. Called by an entering thread,
     * outside the log; returns once the log is awake (or closed: then the entry is refused as ever).
     */
    public interface Waker {
        void wake();

        /** {@link #wake} if that needs no wait; false, the log left dormant, when it would. */
        boolean tryWake();
    }

    /** Sets who wakes the log when dormant; null: nobody holds it asleep (a closed log: its entries are refused). */
    public void wakeWith(Waker waker) {
        pause.waker = waker == null ? pause.own : waker;
    }

    /** {@link #enter} for the pauser itself (which must not wait for its own pause). */
    public static void enterWhilePaused(Cell c) {
        if (c.depth++ == 0) {
            c.seq = c.seq + 1;
        }
    }

    public static void exit(Cell c) {
        if (--c.depth == 0) {
            SEQ.setRelease(c, c.seq + 1); // even = outside; everything done inside happens-before it
        }
    }

    /** Whether anyone is inside now (a moment's look: it may change at once). */
    public boolean anyoneInside() {
        for (Cell c : cells) {
            if ((c.seq & 1) != 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether {@code thread} is inside now, without registering a cell for it (a look from outside the log: a waking
     * thread asking whether it holds up a log it waits for).
     */
    public boolean isInside(Thread thread) {
        for (Cell c : cells) {
            if (c.owner.get() == thread && (c.seq & 1) != 0) {
                return true;
            }
        }
        return false;
    }

    /** True when the calling thread is inside (a caller that must not wait for everyone to leave). */
    public boolean callerInside() {
        return cellOfThread.get().depth > 0;
    }

    /** The threads inside now; cells of threads that died are dropped on the way (thread churn does not grow the list). */
    public Snapshot snapshot() {
        List<Cell> inside = new ArrayList<>();
        List<Long> seqs = new ArrayList<>();
        List<Cell> dead = new ArrayList<>();
        for (Cell c : cells) {
            long s = c.seq;
            if ((s & 1) != 0) {
                inside.add(c);
                seqs.add(s);
            } else if (c.ownerGone()) {
                dead.add(c);
            }
        }
        if (!dead.isEmpty()) {
            cells.removeAll(dead);
        }
        long[] arr = new long[seqs.size()];
        for (int i = 0; i < arr.length; i++) {
            arr[i] = seqs.get(i);
        }
        return new Snapshot(inside.toArray(new Cell[0]), arr);
    }

    /** True once every thread that was inside at {@code snapshot} has left at least once. */
    public boolean passed(Snapshot snapshot) {
        for (int i = 0; i < snapshot.cells.length; i++) {
            if (snapshot.cells[i].seq == snapshot.seqs[i]) {
                return false;
            }
        }
        return true;
    }

    /**
     * Starts a grace period: the answer turns true once every thread inside now has left. For reclaiming
     * memory that threads inside may still reach (a truncated segment's mapping).
     */
    public BooleanSupplier gracePeriod() {
        Snapshot s = snapshot();
        return () -> passed(s);
    }

    /** Waits until no thread is inside (or the timeout passes); true when none is. */
    public boolean awaitNoneInside(long timeout, TimeUnit unit) {
        Snapshot s = snapshot();
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        while (!passed(s) && System.nanoTime() < deadline) {
            Thread.yield();
        }
        return passed(s);
    }
}
