package io.walden.core.commit;

import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Pending asynchronous appends, completed by whoever advances the flushed position: no thread per waiter.
 *
 * <p>Producers add to a lock-free queue. One drainer at a time (the work-in-progress counter's 0 → 1
 * transition elects it) moves them into a heap ordered by LSN, which it alone touches, and completes from
 * its top while the top is flushed; so futures that are pending together complete in LSN order, each exactly
 * once. Every call to {@link #complete} counts as a request: the drainer loops until it has served every
 * request made while it ran, each time re-reading the flushed position and the failure, so a flush that
 * finished while another thread was draining is never missed.
 *
 * <p>Dependent actions of the futures run on the draining thread; use the {@code *Async} variants of
 * {@link CompletableFuture} for heavy work.
 */
final class AsyncCompletions {
    private final ConcurrentLinkedQueue<AppendFuture> incoming = new ConcurrentLinkedQueue<>();
    private final PriorityQueue<AppendFuture> pending = new PriorityQueue<>((a, b) -> Long.compare(a.lsn, b.lsn));
    private final AtomicInteger wip = new AtomicInteger();
    /** Futures added and not yet completed (an estimate for the group-commit batching). */
    private final AtomicInteger pendingCount = new AtomicInteger();
    private final LongSupplier flushed;
    private final Supplier<? extends Throwable> failure;

    AsyncCompletions(LongSupplier flushed, Supplier<? extends Throwable> failure) {
        this.flushed = flushed;
        this.failure = failure;
    }

    void add(AppendFuture future) {
        pendingCount.incrementAndGet();
        incoming.add(future);
    }

    int pendingCount() {
        return pendingCount.get();
    }

    /** Completes every pending future whose record is flushed, or fails them all once the log has failed. */
    void complete() {
        if (wip.getAndIncrement() != 0) {
            return; // the current drainer will see this request
        }
        int missed = 1;
        do {
            drain(flushed.getAsLong(), failure.get());
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
    }

    private void drain(long flushedLsn, Throwable failed) {
        for (AppendFuture f; (f = incoming.poll()) != null; ) {
            pending.add(f);
        }
        for (AppendFuture f; (f = pending.peek()) != null && (f.lsn < flushedLsn || failed != null); ) {
            pending.poll();
            pendingCount.decrementAndGet();
            if (f.lsn < flushedLsn) {
                f.complete(f.lsn);
            } else {
                f.completeExceptionally(failed);
            }
        }
    }
}
