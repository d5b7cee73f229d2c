package io.walden.core.internal.commit;

import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * A blocked committer, one per thread and reused, so that waiting allocates nothing.
 *
 * <p>Ownership: {@code target} and {@code waiting} are written by the owning thread; {@code inStack} is
 * set by the owner when it pushes itself and cleared by the flush leader that pops and drops it;
 * {@code next} is written by whoever pushes and read by the leader after its {@code getAndSet} of the
 * stack head (the CAS that published the node orders it).
 */
public final class Waiter {
    public final Thread thread;
    public volatile long target;
    public volatile boolean waiting;
    public volatile boolean inStack;
    public Waiter next;

    public Waiter(Thread thread) {
        this.thread = thread;
    }

    /** A Treiber stack of waiters; the leader takes it whole. */
    public static final class Stack {
        private final AtomicReference<Waiter> head = new AtomicReference<>();

        public void push(Waiter w) {
            Waiter h;
            do {
                h = head.get();
                w.next = h;
            } while (!head.compareAndSet(h, w));
        }

        Waiter popAll() {
            return head.getAndSet(null);
        }

        /**
         * Pops the waiters: those whose target {@code position} passed, or all when {@code releaseAll}, are unparked and
         * dropped, the others pushed back, and with {@code wakeOneMore} one of those unparked too (to lead the next
         * flush). A node whose owner stopped waiting is dropped; if the owner started waiting again in the meantime,
         * it is unparked so that it pushes itself anew. For whoever moved {@code position} (one thread at a time).
         */
        public void wake(long position, boolean releaseAll, boolean wakeOneMore) {
            boolean oneWoken = !wakeOneMore;
            for (Waiter w = popAll(); w != null; ) {
                Waiter next = w.next;
                w.next = null;
                if (w.waiting && !releaseAll && w.target >= position) {
                    push(w);
                    if (!oneWoken) {
                        oneWoken = true;
                        LockSupport.unpark(w.thread);
                    }
                } else {
                    w.inStack = false;
                    if (w.waiting) {
                        LockSupport.unpark(w.thread);
                    }
                }
                w = next;
            }
        }

        /** Unparks and drops every waiter (the log failed, or the waits were released). */
        public void wakeAll() {
            for (Waiter w = popAll(); w != null; ) {
                Waiter next = w.next;
                w.next = null;
                w.inStack = false;
                LockSupport.unpark(w.thread);
                w = next;
            }
        }
    }
}
