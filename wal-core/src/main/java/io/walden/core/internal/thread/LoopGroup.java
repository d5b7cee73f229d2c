package io.walden.core.internal.thread;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A fixed set of threads that runs many {@link Loop}s, each through its {@link LoopRunner} (Agrona's composite agents,
 * with each agent's own idle): a store of a thousand logs runs a thousand writers, preparers and archivers on a few
 * threads, and a log opened on its own runs each job on a group of one thread, as a thread of its own.
 *
 * <p>How a turn is given out: the runners waiting to run are kept in order of when they are due ({@link #waiting});
 * a free thread takes the first one once it is due, calls its loop outside the lock, and puts it back, due after the
 * idle its loop asked for, or at once when it was woken meanwhile. A runner is never run by two threads at once, and a
 * runner that is due never waits behind one that is not: a busy loop (idle 0) goes to the back of those due now.
 *
 * <p>Thread-safety: every method from any thread. The state of each runner (its place in the queue, whether a thread
 * runs it, whether it was woken meanwhile) is guarded by this group's {@link #lock}, except the wake-up, which is a
 * lock-free push ({@link #woken}) taken under the lock by the next thread that looks.
 */
public final class LoopGroup implements AutoCloseable {
    private final String name;
    final ReentrantLock lock = new ReentrantLock();
    /**
     * Runners woken since a thread of the group last looked, a lock-free stack linked through the runners themselves
     * ({@link LoopRunner#readyNext}): a wake-up, which an appender may give, takes no lock and allocates nothing.
     */
    private final AtomicReference<LoopRunner> woken = new AtomicReference<>();
    /** Signalled when a runner's turn ends: a stop waits on it. */
    final Condition turnEnded = lock.newCondition();
    /** Runners waiting for their turn, the first due first (by due time, then by when they were made). */
    private final TreeSet<LoopRunner> waiting = new TreeSet<>(LoopRunner.BY_DUE_TIME);
    private final List<Thread> threads = new ArrayList<>();
    /**
     * Per thread, 1 while it parks or is about to (set before its last look at {@link #woken}): a wake-up unparks one
     * of those, not every thread of the group, which then contend for the lock to find one runner.
     */
    private final AtomicIntegerArray parked;
    private boolean closed;

    /** Whether the threads were started (at the first runner's start: a group nobody uses holds no thread). */
    private boolean started;

    /** A group of {@code size} daemon threads named {@code name-1} ... ({@code name} alone for one), not started yet. */
    public LoopGroup(String name, int size) {
        if (size < 1) {
            throw new IllegalArgumentException("a loop group has at least one thread, got " + size);
        }
        this.name = name;
        this.parked = new AtomicIntegerArray(size);
        for (int i = 1; i <= size; i++) {
            int index = i - 1;
            threads.add(WaldenThreads.daemon(() -> work(index), size == 1 ? name : name + "-" + i));
        }
    }

    public String name() {
        return name;
    }

    public int size() {
        return threads.size();
    }

    /** A runner for {@code loop} on this group's threads; it runs once {@link LoopRunner#start()} is called. */
    public LoopRunner runner(String what, Loop loop) {
        return new LoopRunner(this, what, loop);
    }

    /** Queues {@code r} to run at {@code due} (nanoTime). Lock held. */
    void queue(LoopRunner r, long due) {
        if (!started && !closed) {
            started = true;
            threads.forEach(Thread::start);
        }
        r.due = due;
        waiting.add(r);
        if (waiting.first() == r) {
            unparkAll(); // a thread waiting for a later first runner must look again
        }
    }

    /**
     * {@code r} was woken (any thread, lock-free): pushed on the stack of woken runners, unless it is there already, and
     * one parked thread of the group is unparked to look again. A thread of the group then takes it as due now, or, if
     * it is running, runs it again at once after its turn ({@link #takeWoken}).
     *
     * <p>No wake-up is lost (Dekker, on volatile accesses): this pushes, then reads the threads' parked flags; a thread
     * sets its flag, then reads the stack before it parks. So either this sees the flag and unparks that thread (a
     * permit given before the park is kept), or the thread sees the push and looks again instead of parking. When no
     * thread is parked, every thread is in a turn or about to look, and each looks at the stack before its next park.
     * A thread that takes several runners due at once unparks the others ({@link #work}).
     */
    void woken(LoopRunner r) {
        if (!r.markWoken()) {
            return; // on the stack already: one look serves both wake-ups
        }
        LoopRunner head;
        do {
            head = woken.get();
            r.readyNext = head;
        } while (!woken.compareAndSet(head, r));
        unparkOne();
    }

    /** Unparks one thread that parks (or is about to); none when all are working (they look before they park). */
    private void unparkOne() {
        for (int i = 0; i < threads.size(); i++) {
            if (parked.get(i) == 1) {
                LockSupport.unpark(threads.get(i));
                return;
            }
        }
    }

    /** {@link LoopRunner#wakeBy}: queued earlier if it waits, or due by then after its turn if it runs. */
    void wakeBy(LoopRunner r, long deadline) {
        lock.lock();
        try {
            if (!r.isQueued()) {
                r.dueByWhileRunning(deadline);
            } else if (r.due - deadline > 0 && waiting.remove(r)) {
                r.due = deadline;
                waiting.add(r);
                if (waiting.first() == r) {
                    unparkAll(); // a thread waiting for a later first runner must look again
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** Takes every runner woken since the last look: due now if it waits, again at once if it runs. Lock held. */
    private void takeWoken() {
        LoopRunner r = woken.getAndSet(null);
        while (r != null) {
            LoopRunner next = r.readyNext;
            r.readyNext = null;
            r.clearWoken(); // before it is handled: a wake-up from now on is pushed again, never lost
            if (r.isQueued() && waiting.remove(r)) {
                r.due = System.nanoTime();
                waiting.add(r);
            } else {
                r.wokenWhileRunning();
            }
            r = next;
        }
    }

    /** Makes every thread of the group look at the queue again (a few threads: the cores at most). */
    private void unparkAll() {
        for (Thread t : threads) {
            LockSupport.unpark(t);
        }
    }

    /** Takes {@code r} out of the queue, if it is there. Lock held. */
    boolean unqueue(LoopRunner r) {
        return waiting.remove(r);
    }

    /**
     * One thread of the group: takes the first runner that is due, runs its turn outside the lock, puts it back; parks
     * until the first is due, or until a wake-up or a new first runner unparks it (a permit given before the park is
     * kept, so nothing queued or woken meanwhile is missed).
     */
    private void work(int index) {
        LoopRunner r = null;
        long idle = 0;
        while (true) {
            long wait;
            lock.lock();
            try {
                if (r != null) {
                    r.turnDone(idle);
                    Thread.interrupted(); // an interrupt meant for that runner's turn never reaches the next one's
                    r = null;
                }
                if (closed) {
                    return;
                }
                takeWoken();
                LoopRunner first = waiting.isEmpty() ? null : waiting.first();
                wait = first == null ? Long.MAX_VALUE : first.due - System.nanoTime();
                if (wait <= 0) {
                    waiting.pollFirst();
                    first.running(Thread.currentThread());
                    r = first;
                    if (!waiting.isEmpty() && waiting.first().due - System.nanoTime() <= 0) {
                        unparkAll(); // more are due: another free thread may take the next one
                    }
                }
            } finally {
                lock.unlock();
            }
            if (r != null) {
                idle = r.turn();
                continue;
            }
            parked.set(index, 1);
            if (woken.get() == null) { // after the flag: a wake-up pushed from now on unparks this thread or another
                if (wait == Long.MAX_VALUE) {
                    LockSupport.park(this);
                } else {
                    LockSupport.parkNanos(this, wait);
                }
            }
            parked.set(index, 0);
        }
    }

    /**
     * Ends the group's threads once their current turns end, and waits up to {@code timeout} for them. The runners'
     * owners stop them first; a runner still queued is dropped.
     */
    public void close(long timeout, TimeUnit unit) {
        lock.lock();
        try {
            closeLocked();
        } finally {
            lock.unlock();
        }
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        for (Thread t : threads) {
            if (t == Thread.currentThread() || !t.isAlive()) {
                continue;
            }
            try {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Ends the group's threads once their current turns end, without waiting for them. Lock held. */
    void closeLocked() {
        closed = true;
        waiting.clear();
        unparkAll();
    }

    @Override
    public void close() {
        close(30, TimeUnit.SECONDS);
    }

    /** Whether every thread of the group has ended. */
    public boolean isTerminated() {
        for (Thread t : threads) {
            if (t.isAlive()) {
                return false;
            }
        }
        return true;
    }
}
