package io.walden.core.internal.commit;

import java.util.concurrent.CompletableFuture;

/** A wait that completes a {@link CompletableFuture} with the record's LSN (for the futures API). */
public final class FutureCompletion extends Completion {
    public final CompletableFuture<Long> future = new CompletableFuture<>();

    @Override
    protected void complete(long lsn) {
        future.complete(lsn);
    }

    @Override
    protected void fail(Throwable cause) {
        future.completeExceptionally(cause);
    }
}
