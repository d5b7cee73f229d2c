package io.walden.core.internal.commit;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * Wakes those that wait for the written or flushed position to pass them: readers blocked in {@link #await}, and the
 * wake-ups registered with {@link #wakeOnSignal} (replication senders' loops on a shared {@code LoopGroup}, which look
 * at the positions on their next turn).
 *
 * <p>The signalling side is on the append path, so it costs one volatile read ({@link #interested}) while nobody waits
 * and no wake-up is registered; with some registered, a call of each (a {@code LoopRunner.wake()}: lock-free,
 * allocation-free). Lost wake-ups are impossible: a reader (or a registration) increments {@code interested} and then
 * reads the position, while a signaller advances the position and then reads {@code interested} (both volatile, so at
 * least one sees the other); the notify happens under the monitor the reader holds until it waits, and a loop woken
 * while it works runs again at once (LoopRunner's contract).
 *
 * <p>Thread-safety: any thread may signal, wait, register or unregister.
 */
public final class ReadNotifier {
    private static final Runnable[] NONE = new Runnable[0];

    /** Blocked readers plus registered wake-ups: the one volatile read of {@link #signal()} while both are none. */
    private final AtomicInteger interested = new AtomicInteger();
    /** Blocked readers: incremented before {@link #interested}, so a signaller that sees the one sees the other. */
    private final AtomicInteger blocked = new AtomicInteger();
    /**
     * The registered wake-ups, copied on write (registrations are rare: a replica's stream starting or ending); written
     * under this notifier's monitor before {@link #interested} counts them, read by any signaller after it.
     */
    private volatile Runnable[] wakeUps = NONE;

    /** Called after a position advanced. */
    public void signal() {
        if (interested.get() > 0) {
            signalInterested();
        }
    }

    private void signalInterested() {
        for (Runnable w : wakeUps) {
            w.run();
        }
        if (blocked.get() > 0) {
            synchronized (this) {
                notifyAll();
            }
        }
    }

    /**
     * Runs {@code wakeUp} at every {@link #signal()} from now on, on the signaller's thread (an appender's: it must not
     * block, lock or allocate), until {@link #stopWaking}: register it before its loop first reads the positions, so
     * that no move after that read goes unnoticed.
     */
    public void wakeOnSignal(Runnable wakeUp) {
        synchronized (this) {
            Runnable[] now = wakeUps;
            Runnable[] next = Arrays.copyOf(now, now.length + 1);
            next[now.length] = wakeUp;
            wakeUps = next; // before the count that makes signallers read it
        }
        interested.incrementAndGet(); // StoreLoad with the loop's first read of a position (a volatile RMW)
    }

    /**
     * Stops running {@code wakeUp} (the same reference as registered); nothing when it is not registered. A signal
     * already under way may still run it.
     */
    public void stopWaking(Runnable wakeUp) {
        synchronized (this) {
            Runnable[] now = wakeUps;
            int at = -1;
            for (int i = 0; i < now.length && at < 0; i++) {
                at = now[i] == wakeUp ? i : -1;
            }
            if (at < 0) {
                return;
            }
            Runnable[] next = new Runnable[now.length - 1];
            System.arraycopy(now, 0, next, 0, at);
            System.arraycopy(now, at + 1, next, at, next.length - at);
            wakeUps = next.length == 0 ? NONE : next;
        }
        interested.decrementAndGet();
    }

    /**
     * Waits until {@code limit} moves past {@code position}, the timeout passes, or {@code stop} says so.
     *
     * @return true when the limit moved past the position
     */
    public boolean await(LongSupplier limit, long position, long timeout, TimeUnit unit, BooleanSupplier stop)
            throws InterruptedException {
        if (limit.getAsLong() > position) {
            return true;
        }
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        synchronized (this) {
            blocked.incrementAndGet();
            interested.incrementAndGet();
            try {
                while (limit.getAsLong() <= position) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0 || stop.getAsBoolean()) {
                        return false;
                    }
                    // Bounded so that a close() or a position moved without a signal is noticed promptly.
                    TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
                }
                return true;
            } finally {
                interested.decrementAndGet();
                blocked.decrementAndGet();
            }
        }
    }
}
