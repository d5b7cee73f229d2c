package io.walden.core.internal.commit;

import java.util.concurrent.locks.LockSupport;

/**
 * How a thread waits for another to finish a short step (a record still being copied, a write in progress, a flush
 * leader to step down): it spins first, since such a step usually ends within microseconds, then yields, then sleeps
 * a microsecond at a time, so that a waiter never takes the CPU from the thread it waits for for long.
 *
 * <p>Thread-safety: stateless; any thread.
 */
public final class Backoff {
    private static final int SPINS = 100;
    /** From this many looks on, each pause sleeps: a waiter that must notice a failed log checks it from here. */
    public static final int SLEEPS_FROM = 200;

    private Backoff() {
    }

    /** One pause of a wait that has looked {@code spins} times already. */
    public static void pause(int spins) {
        if (spins < SPINS) {
            Thread.onSpinWait();
        } else if (spins < SLEEPS_FROM) {
            Thread.yield();
        } else {
            LockSupport.parkNanos(1_000);
        }
    }
}
