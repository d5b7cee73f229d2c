package io.walden.core.commit;

import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Pending asynchronous appends, completed by whoever advances the flushed position: no thread per waiter.
 *
 * <p>Producers add to a lock-free queue. One completer at a time (a CAS flag) moves them into a heap
 * ordered by LSN, which it alone touches, and completes from its top while the top is flushed; so futures
 * that are pending together complete in LSN order, and each exactly once. A completer re-checks after
 * dropping the flag, so an add that raced with it is never stranded.
 *
 * <p>Dependent actions of the futures run on the completing thread; use the {@code *Async} variants of
 * {@link CompletableFuture} for heavy work.
 */
final class AsyncCompletions {
    private final ConcurrentLinkedQueue<AppendFuture> incoming = new ConcurrentLinkedQueue<>();
    private final PriorityQueue<AppendFuture> pending = new PriorityQueue<>((a, b) -> Long.compare(a.lsn, b.lsn));
    private final AtomicBoolean completing = new AtomicBoolean();
    /** Futures added and not yet completed (an estimate for the group-commit batching). */
    private final java.util.concurrent.atomic.AtomicInteger pendingCount = new java.util.concurrent.atomic.AtomicInteger();

    void add(AppendFuture future) {
        pendingCount.incrementAndGet();
        incoming.add(future);
    }

    int pendingCount() {
        return pendingCount.get();
    }

    boolean hasPending() {
        return !incoming.isEmpty() || !pending.isEmpty();
    }

    /** Completes every pending future whose record lies below {@code flushed}; fails them all when {@code failure} is set. */
    void complete(long flushed, Throwable failure) {
        while (completing.compareAndSet(false, true)) {
            try {
                for (AppendFuture f; (f = incoming.poll()) != null; ) {
                    pending.add(f);
                }
                for (AppendFuture f; (f = pending.peek()) != null && (f.lsn < flushed || failure != null); ) {
                    pending.poll();
                    pendingCount.decrementAndGet();
                    if (f.lsn < flushed) {
                        f.complete(f.lsn);
                    } else {
                        f.completeExceptionally(failure);
                    }
                }
            } finally {
                completing.set(false);
            }
            if (incoming.isEmpty()) {
                return;
            }
        }
    }
}
