package io.walden.server.http;

import io.netty.handler.codec.http.HttpResponseStatus;
import io.walden.core.Wal;
import io.walden.core.WalReader;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/**
 * Runs the data API's reads, which block (they may long-poll or stream), on the bounded reader pool
 * ({@code max-readers}): when it is full the request gets 503 rather than a queue that grows without bound. Also
 * carries the data API's stop, which ends the streams and makes a refused read say that the server is stopping.
 *
 * <p>Thread-safety: {@link #open} runs on an event loop; {@link #stop} may be called from any thread and is seen by
 * the reader threads (a volatile flag).
 */
final class ReaderPool {
    /** What a reader thread does with the reader a request asked for. */
    @FunctionalInterface
    interface ReaderWork {
        void run(WalReader reader) throws Exception;
    }

    @FunctionalInterface
    private interface Work {
        void run() throws Exception;
    }

    private final Wal wal;
    private final ExecutorService readers;
    private volatile boolean stopping;

    ReaderPool(Wal wal, ExecutorService readers) {
        this.wal = wal;
        this.readers = readers;
    }

    void stop() {
        stopping = true;
    }

    boolean stopping() {
        return stopping;
    }

    /**
     * Opens the reader a request asks for and hands it to a reader thread. From an LSN it is opened on the event loop
     * (it validates the LSN at once: 410, 400). Where finding the start may block, the reader thread opens it instead:
     * from a cursor on a replica (the cursors' lock, while the receiver applies control records), and from a time (the
     * seek may build a segment's page index the first time it reads that segment: a walk of a whole segment's length
     * words, up to milliseconds, that no event loop may wait on; docs/benchmarks.md, "Record times").
     */
    void open(Exchange ex, Supplier<WalReader> opener, ReaderWork work) {
        if (ex.param("from_time") != null
                || ex.param("cursor") != null && wal.status().appendsRefusedReason() != null) {
            submit(ex, null, () -> {
                WalReader reader = opener.get();
                work.run(reader);
            });
            return;
        }
        WalReader reader = opener.get();
        submit(ex, reader, () -> work.run(reader));
    }

    private void submit(Exchange ex, WalReader reader, Work work) {
        try {
            readers.execute(() -> {
                try {
                    work.run();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    ApiErrors.answer(ex, e);
                } catch (Exception e) {
                    ApiErrors.answer(ex, e);
                }
            });
        } catch (RejectedExecutionException e) {
            if (reader != null) {
                reader.close();
            }
            if (stopping) {
                ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "shutting_down", "the server is stopping");
            } else {
                ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "too_many_readers",
                        "every reader slot is busy (max-readers); retry shortly");
            }
        }
    }
}
