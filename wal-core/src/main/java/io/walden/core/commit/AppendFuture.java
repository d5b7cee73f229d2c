package io.walden.core.commit;

import java.util.concurrent.CompletableFuture;

/** The future of one asynchronous append, completed with its LSN once the flushed position passes it. */
final class AppendFuture extends CompletableFuture<Long> {
    final long lsn;
    final long createdNanos = System.nanoTime();

    AppendFuture(long lsn) {
        this.lsn = lsn;
    }
}
