package io.walden.server.http;

import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Moves appends that must wait (for the next segment to be prepared, or for room in the WAL buffers) off the event
 * loops, onto the {@code walden-segment-wait} thread, and counts those still holding their request's body so that
 * a graceful stop waits for them.
 *
 * <p>Thread-safety: {@link #submit} runs on an event loop; {@link #pending} may be read from any thread.
 */
final class SegmentWaits {
    /** Never an event loop. */
    private final Executor executor;
    private final AtomicInteger pending = new AtomicInteger();

    SegmentWaits(Executor executor) {
        this.executor = executor;
    }

    /**
     * Runs an append that may wait for the next segment (or for room in the WAL buffers) off the event loop.
     *
     * <p>The task holds its own reference to the request, taken here on the event loop and released by the task: the
     * exchange releases its reference when its answer is written or the connection closes, which may happen before the
     * task has copied the body into the log (and the exchange may then carry the connection's next request). Without
     * it, the task would copy from pooled memory that may already carry another request's bytes. A request received
     * whole is appended even if its client has gone (its outcome is unknown to the client, like any commit in flight
     * at a disconnect). Later requests of the connection wait until this one is answered, so that their appends cannot
     * overtake it in the log (HttpConnection).
     */
    void submit(Exchange ex, Runnable append) {
        FullHttpRequest request = ex.request().retain();
        ex.holdLaterRequests();
        pending.incrementAndGet();
        try {
            executor.execute(() -> {
                try {
                    append.run();
                } catch (RuntimeException e) {
                    ApiErrors.answer(ex, e);
                } finally {
                    request.release();
                    pending.decrementAndGet();
                }
            });
        } catch (RejectedExecutionException e) {
            request.release();
            pending.decrementAndGet();
            ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "shutting_down", "the server is stopping");
        }
    }

    /** Appends handed to the segment-wait thread and not yet done with their request's body. */
    int pending() {
        return pending.get();
    }
}
