package io.walden.core.commit;

import java.util.concurrent.atomic.AtomicReference;

/**
 * A blocked committer, one per thread and reused, so that waiting allocates nothing.
 *
 * <p>Ownership: {@code target} and {@code waiting} are written by the owning thread; {@code inStack} is
 * set by the owner when it pushes itself and cleared by the flush leader that pops and drops it;
 * {@code next} is written by whoever pushes and read by the leader after its {@code getAndSet} of the
 * stack head (the CAS that published the node orders it).
 */
final class Waiter {
    final Thread thread;
    volatile long target;
    volatile boolean waiting;
    volatile boolean inStack;
    Waiter next;

    Waiter(Thread thread) {
        this.thread = thread;
    }

    /** A Treiber stack of waiters; the leader takes it whole. */
    static final class Stack {
        private final AtomicReference<Waiter> head = new AtomicReference<>();

        void push(Waiter w) {
            Waiter h;
            do {
                h = head.get();
                w.next = h;
            } while (!head.compareAndSet(h, w));
        }

        Waiter popAll() {
            return head.getAndSet(null);
        }
    }
}
