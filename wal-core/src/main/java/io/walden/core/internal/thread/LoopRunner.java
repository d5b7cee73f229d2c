package io.walden.core.internal.thread;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs a {@link Loop} (Agrona's {@code AgentRunner}): calls {@link Loop#doWork()}, idles as long as it asked, until
 * {@link #wake()} or {@link #stop} ends the idle early, and hands whatever the work threw to {@link Loop#onError}. The
 * one idle strategy of the log's background jobs: a deadline or a wake-up. (Short waits for another thread's step spin,
 * yield, then park: {@code commit.Backoff}.)
 *
 * <p>Where it runs: on a {@link LoopGroup}'s threads, shared with other runners (a store's logs), or, made with
 * {@link #LoopRunner(String, Loop)}, on a thread of its own (a group of one, ended with the runner). Either way one
 * turn at a time: a loop's calls never overlap, and each happens-after the one before (the group's lock is taken
 * between them).
 *
 * <p>Memory ordering: a wake-up that comes while the loop is working is kept (its next idle is skipped), and one that
 * comes while it idles ends the idle. The loop must still look at its own state (a volatile flag the waker set before
 * waking it) on each turn, and take a wake-up as a hint only. An idle may also end early for no reason.
 *
 * <p>Thread-safety: {@link #start}, {@link #wake}, {@link #isRunning}, {@link #stop} and {@link #interrupt} from any
 * thread. The fields without {@code volatile} are guarded by the group's lock.
 */
public final class LoopRunner {
    /** The group's queue order: the first due first, then the first made (so no two runners compare equal). */
    static final Comparator<LoopRunner> BY_DUE_TIME = (a, b) -> {
        int byDue = Long.signum(a.due - b.due); // nanoTime order, safe across a wrap: due times lie within a day
        return byDue != 0 ? byDue : Long.compare(a.id, b.id);
    };
    private static final AtomicLong IDS = new AtomicLong();
    private static final Logger LOG = LoggerFactory.getLogger(LoopRunner.class);
    /** The longest idle: a day (due times stay far from a nanoTime overflow; a loop idling longer is woken). */
    private static final long MAX_IDLE_NANOS = TimeUnit.DAYS.toNanos(1);

    private enum State { NEW, QUEUED, RUNNING, STOPPED }

    private final LoopGroup group;
    /** Whether {@link #group} is this runner's own, ended when it stops. */
    private final boolean ownGroup;
    private final String name;
    private final Loop loop;
    private final long id = IDS.incrementAndGet();
    /** When it is due to run again (nanoTime), while queued. */
    long due;
    private State state = State.NEW;
    /** The thread running its turn, while it runs one. */
    private Thread thread;
    /** Woken while it ran a turn: the next turn comes at once. */
    private boolean woken;
    /** {@link #wakeBy} while it ran a turn: its next turn comes no later than {@link #dueBy}. */
    private boolean hasDueBy;
    private long dueBy;
    private volatile boolean running = true;

    /** A runner for {@code loop} on a daemon thread of its own named {@code name} (see {@link WaldenThreads}); not started. */
    public LoopRunner(String name, Loop loop) {
        this(new LoopGroup(name, 1), name, loop, true);
    }

    LoopRunner(LoopGroup group, String name, Loop loop) {
        this(group, name, loop, false);
    }

    private LoopRunner(LoopGroup group, String name, Loop loop, boolean ownGroup) {
        this.group = group;
        this.name = name;
        this.loop = loop;
        this.ownGroup = ownGroup;
    }

    /** What it runs, for thread dumps and logs: the job's name (its thread's, on a group of one). */
    public String name() {
        return name;
    }

    public void start() {
        group.lock.lock();
        try {
            if (state == State.NEW && running) {
                state = State.QUEUED;
                group.queue(this, System.nanoTime());
            }
        } finally {
            group.lock.unlock();
        }
    }

    /**
     * Ends the current idle, or the next one if the loop is working now. Lock-free and allocation-free: an appender
     * may call it (a writer's nudge).
     */
    public void wake() {
        group.woken(this);
    }

    /**
     * Makes the loop's next turn come no later than {@code deadline} ({@link System#nanoTime()}), without ending its idle
     * before then: a wake-up put off. Runners of one group given the same deadline run one after another on one thread's
     * wake-up. Takes the group's lock: for a caller that does it rarely (a writer's nudge, once per idle).
     */
    public void wakeBy(long deadline) {
        group.wakeBy(this, deadline);
    }

    /** False once {@link #stop} was called, or once the loop ended itself ({@link Loop#onError} said {@link Loop#STOP}). */
    public boolean isRunning() {
        return running;
    }

    /**
     * Ends the loop after its current call and waits up to {@code timeout} for that call to end. Called on the loop's
     * own thread (from a callback of its work), it returns at once: the loop ends after the current call.
     *
     * @return true when the loop has ended (and its own thread, if it has one)
     */
    public boolean stop(Duration timeout) {
        running = false;
        long deadline = System.nanoTime() + Math.max(1, timeout.toNanos());
        group.lock.lock();
        try {
            if (state == State.QUEUED) {
                group.unqueue(this);
                state = State.STOPPED;
            } else if (state == State.NEW) {
                state = State.STOPPED;
            } else if (state == State.RUNNING && thread == Thread.currentThread()) {
                return false;
            }
            while (state != State.STOPPED) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                try {
                    group.turnEnded.awaitNanos(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        } finally {
            group.lock.unlock();
        }
        if (ownGroup) {
            group.close(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            return group.isTerminated();
        }
        return true;
    }

    /**
     * Interrupts the thread running the loop's current turn, if one is, for a job blocked in I/O that a stop did not
     * end in time (an upload); the group clears it before that thread takes another turn. Never for a job that writes
     * or forces the log's files: an interrupt closes a {@code FileChannel} under it.
     */
    public void interrupt() {
        group.lock.lock();
        try {
            if (thread != null) {
                thread.interrupt();
            }
        } finally {
            group.lock.unlock();
        }
    }

    // ------------------------------------------------------------------ called by the group

    /** Next on the group's stack of woken runners (written before the push that publishes it, read after the take). */
    LoopRunner readyNext;
    /** 1 while on the group's stack of woken runners. */
    private volatile int onWokenStack;
    private static final VarHandle ON_WOKEN_STACK;

    static {
        try {
            ON_WOKEN_STACK = MethodHandles.lookup().findVarHandle(LoopRunner.class, "onWokenStack", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** True for the wake-up that must push it on the stack; false when it is there already. */
    boolean markWoken() {
        return onWokenStack == 0 && ON_WOKEN_STACK.compareAndSet(this, 0, 1);
    }

    void clearWoken() {
        onWokenStack = 0;
    }

    /** Whether it waits in the group's queue. Lock held. */
    boolean isQueued() {
        return state == State.QUEUED;
    }

    /** A wake-up came while it ran (or before it started): if it runs, its next turn comes at once. Lock held. */
    void wokenWhileRunning() {
        if (state == State.RUNNING) {
            woken = true;
        }
    }

    /** A {@link #wakeBy} came while it ran (or before it started): its next turn comes no later than {@code deadline}. Lock held. */
    void dueByWhileRunning(long deadline) {
        if (state == State.RUNNING && (!hasDueBy || deadline - dueBy < 0)) {
            hasDueBy = true;
            dueBy = deadline;
        }
    }

    /** It is taken off the queue to run on {@code t}. Lock held. */
    void running(Thread t) {
        state = State.RUNNING;
        thread = t;
    }

    /** One call of the loop, outside the lock; the idle it asks for, or {@link Loop#STOP}. */
    long turn() {
        if (!running) {
            return Loop.STOP;
        }
        try {
            return loop.doWork();
        } catch (Throwable failure) {
            try {
                return loop.onError(failure);
            } catch (Throwable alsoFailed) {
                // The job cannot even say what to do: it ends, and the group's thread goes on serving the others.
                alsoFailed.addSuppressed(failure);
                LOG.error("The background job {} failed, and so did its error handling: it ends", name, alsoFailed);
                return Loop.STOP;
            }
        }
    }

    /** The turn ended asking for {@code idle}: queued again, or stopped. Lock held. */
    void turnDone(long idle) {
        thread = null;
        if (idle == Loop.STOP) {
            running = false;
        }
        if (!running) {
            state = State.STOPPED;
            group.turnEnded.signalAll();
            if (ownGroup) {
                group.closeLocked(); // its own thread ends with it, as a thread of its own would
            }
            return;
        }
        state = State.QUEUED;
        long now = System.nanoTime();
        long next = woken || idle <= 0 ? now : now + Math.min(idle, MAX_IDLE_NANOS);
        group.queue(this, hasDueBy && dueBy - next < 0 ? dueBy : next);
        woken = false;
        hasDueBy = false;
    }
}
