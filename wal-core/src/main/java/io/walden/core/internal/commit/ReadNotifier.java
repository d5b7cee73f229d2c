package io.walden.core.internal.commit;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * Wakes readers that wait for the written or flushed position to pass them.
 *
 * <p>The signalling side is on the append path, so it costs one volatile read while nobody waits.
 * Lost wake-ups are impossible: a reader increments {@code waiting} and then re-reads the position,
 * while a signaller advances the position and then reads {@code waiting} (both volatile, so at least
 * one sees the other), and the notify happens under the monitor the reader holds until it waits.
 *
 * <p>Thread-safety: any thread may signal or wait.
 */
public final class ReadNotifier {
    private final AtomicInteger waiting = new AtomicInteger();

    /** Called after a position advanced. */
    public void signal() {
        if (waiting.get() > 0) {
            synchronized (this) {
                notifyAll();
            }
        }
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
            waiting.incrementAndGet();
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
                waiting.decrementAndGet();
            }
        }
    }
}
