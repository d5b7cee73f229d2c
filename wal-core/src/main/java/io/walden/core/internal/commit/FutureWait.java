package io.walden.core.internal.commit;

import java.util.concurrent.CompletableFuture;

/**
 * The {@link DurableWait} behind an {@code appendAsync}'s future: completed with the record's LSN once its level
 * holds. Nobody flushes for a future but the background writer, so queueing one wakes it (unless it was told at once).
 *
 * <p>Thread-safety: as {@link DurableWait}; the future from any thread.
 */
public final class FutureWait extends DurableWait {
    public final CompletableFuture<Long> future = new CompletableFuture<>();

    @Override
    protected void reached(long lsn) {
        future.complete(lsn);
    }

    @Override
    protected void unreachable(Throwable cause) {
        future.completeExceptionally(cause);
    }

    @Override
    protected boolean needsWriter() {
        return !future.isDone();
    }
}
