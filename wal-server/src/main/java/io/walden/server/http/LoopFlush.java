package io.walden.server.http;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;
import io.walden.core.Wal;
import io.walden.core.WalException;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The flush of the event loops' durable appends (docs/group-commit.md, "Over HTTP"). Each loop asks once per batch of
 * reads, after every connection it had to read was read (Netty runs tasks after the I/O it processed), and the log
 * decides ({@link io.walden.core.NonWaitingAppends#flushWhenGathered}): it forces at once, on this loop, when that
 * serves the commits it expects (as many as recent flushes served, from every loop), when only one is expected (a
 * lone request's commit then costs no thread hand-off at all), or when the first of them has waited a few recent
 * flush times. Otherwise, and while another loop is forcing, the loop goes back to its connections and asks again on
 * a timer of its own, so that requests read meanwhile, on it or on another loop, join the same force. A loop blocks
 * for at most one write and force at a time, and only for records some request waits for; no flush is handed to
 * another thread, so the loop that forced answers its own requests without a hand-off.
 *
 * <p>A named log (a store's) does not block the loop for its force at all: its flush hands the records to the store's
 * journal and the loop forces the journal once, after the flush tasks of every log its batch appended to
 * (docs/group-commit.md, "One journal force per event-loop batch"), so one {@code fdatasync} serves them all.
 *
 * <p>Where the loop's timers are coarse (Java's NIO selector wakes in whole milliseconds), the loop forces as soon as
 * no other flush is in progress instead ({@code flushIfIdle}), and the background writer takes what it could not.
 *
 * <p>Thread-safety: each event loop has its own task (a thread-local, or for a log that may go an entry only that loop
 * puts in a map), touched only by that loop;
 * {@link #afterBatch} is called on an event loop.
 */
final class LoopFlush {
    private final Wal wal;
    /** Whether the loop flushes itself, or always leaves it to the background writer. */
    private final boolean flushOnEventLoop;
    /** Whether the loop's timers are fine enough (epoll, io_uring: nanoseconds) to put a force off by microseconds. */
    private final boolean gather;

    /**
     * Each loop's task, for the log the server always has: an index into the loop's own table, the cheapest lookup.
     * Null for a log that may go (a named log): a thread-local's value stays in every loop's table for as long as the
     * loop runs, and would keep a deleted log's {@link Wal} with it.
     */
    private final FastThreadLocal<Task> tasks;
    /** Each loop's task, for a log that may go: dropped with this object. Each loop puts only its own. */
    private final Map<EventExecutor, Task> perLoop;

    /**
     * @param permanent whether the log stays as long as the event loops (the log {@code default}): its tasks are then
     *                  thread-locals, else a map that goes with the log
     */
    LoopFlush(Wal wal, boolean flushOnEventLoop, boolean gather, boolean permanent) {
        this.wal = wal;
        this.flushOnEventLoop = flushOnEventLoop;
        this.gather = gather;
        this.tasks = !permanent ? null : new FastThreadLocal<>() {
            @Override
            protected Task initialValue() {
                return new Task();
            }
        };
        this.perLoop = permanent ? null : new ConcurrentHashMap<>();
    }

    private Task task(EventExecutor loop) {
        if (tasks != null) {
            return tasks.get();
        }
        Task t = perLoop.get(loop);
        if (t == null) {
            t = new Task();
            perLoop.put(loop, t);
        }
        return t;
    }

    /** Asks for the flush at the end of the current batch of reads of the loop running {@code ex}, once per batch. */
    void afterBatch(Exchange ex) {
        Task flush = task(ex.ctx().executor());
        if (!flush.queued) {
            flush.queued = true;
            flush.loop = ex.ctx().executor();
            try {
                flush.loop.execute(flush);
            } catch (RejectedExecutionException e) {
                flush.queued = false; // the event loop is shutting down: the writer flushes what is waiting
                wal.nonWaiting().requestFlush();
            }
        }
    }

    private final class Task implements Runnable {
        private final Runnable timer = this::onTimer;
        private EventExecutor loop;
        private boolean queued;
        /** A timer is armed for this task; it runs it when it fires. */
        private boolean armed;
        /** When the earliest armed timer fires ({@link System#nanoTime()}). */
        private long armedAt;

        @Override
        public void run() {
            queued = false;
            decide();
        }

        private void onTimer() {
            armed = false;
            decide();
        }

        private void decide() {
            try {
                if (!flushOnEventLoop) {
                    wal.nonWaiting().requestFlush();
                } else if (!gather) {
                    wal.nonWaiting().flushIfIdle();
                } else {
                    long again = wal.nonWaiting().flushWhenGathered(loop); // a named log's journal force runs after the batch's other flushes
                    if (again > 0) {
                        long at = System.nanoTime() + again;
                        // One timer, unless the log now asks sooner (a flush elsewhere ended before the gather's end):
                        // a timer that fires late only asks again, so an extra one costs a call, a missed one a wait.
                        if (!armed || at < armedAt) {
                            armed = true;
                            armedAt = at;
                            loop.schedule(timer, again, TimeUnit.NANOSECONDS);
                        }
                    }
                }
            } catch (WalException | RejectedExecutionException e) {
                // closed or failed: the appends' completions are told so by the log; the writer flushes what it can
                armed = false;
                wal.nonWaiting().requestFlush();
            }
        }
    }
}
