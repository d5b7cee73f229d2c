package io.walden.server.http;

import io.netty.util.concurrent.FastThreadLocal;
import io.walden.core.Wal;
import io.walden.core.WalException;

import java.util.concurrent.RejectedExecutionException;

/**
 * The flush of an event loop's batch of durable appends: runs once per batch of reads, after every connection of the
 * loop that had something to read was read (Netty runs tasks after the I/O it processed). If no flush is in
 * progress, the loop flushes now itself: a lone request's commit then costs no thread hand-off at all, and the
 * loop's own answers go out without one. If one is, the background writer is asked for the next, and the loop goes
 * back to its connections. Either way the loop blocks for at most one write and force, and only for records some
 * of its own requests wait for.
 *
 * <p>Thread-safety: each event loop has its own task (a thread-local), touched only by that loop;
 * {@link #afterBatch} is called on an event loop.
 */
final class LoopFlush {
    private final Wal wal;
    /** Whether the loop flushes itself when no flush is in progress, or always leaves it to the writer. */
    private final boolean flushOnEventLoop;

    private final FastThreadLocal<Task> tasks = new FastThreadLocal<>() {
        @Override
        protected Task initialValue() {
            return new Task();
        }
    };

    LoopFlush(Wal wal, boolean flushOnEventLoop) {
        this.wal = wal;
        this.flushOnEventLoop = flushOnEventLoop;
    }

    /** Asks for the flush at the end of the current batch of reads of the loop running {@code ex}, once per batch. */
    void afterBatch(Exchange ex) {
        Task flush = tasks.get();
        if (!flush.scheduled) {
            flush.scheduled = true;
            try {
                ex.ctx().executor().execute(flush);
            } catch (RejectedExecutionException e) {
                flush.scheduled = false; // the event loop is shutting down: the writer flushes what is waiting
                wal.nonWaiting().requestFlush();
            }
        }
    }

    private final class Task implements Runnable {
        private boolean scheduled;

        @Override
        public void run() {
            scheduled = false;
            try {
                if (flushOnEventLoop) {
                    wal.nonWaiting().flushIfIdle();
                } else {
                    wal.nonWaiting().requestFlush();
                }
            } catch (WalException e) {
                // closed or failed: the appends' completions are told so by the log; the writer flushes what it can
                wal.nonWaiting().requestFlush();
            }
        }
    }
}
