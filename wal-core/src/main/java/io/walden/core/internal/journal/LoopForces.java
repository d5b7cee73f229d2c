package io.walden.core.internal.journal;

import io.walden.core.WalException;
import io.walden.core.internal.WritePath;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The store journal's force on the event loops (docs/group-commit.md, "One journal force per event-loop batch"). A
 * store log's flush on an event loop hands its bytes to the journal and returns without waiting for the force
 * ({@code FlushLeader#leadDeferred}); it then asks for the journal's force here. Each loop thread has one
 * {@link LoopForce}, queued as a task at most once at a time: it runs after the loop's other tasks of the batch, which
 * are the other logs' flushes, so the logs one batch of the loop appended to share one {@code fdatasync}. The force
 * gathers as a log's event-loop flush does ({@code GroupCommit#leadWhenGathered}): the journal's recent flushes say how
 * many log flushes to expect (from every loop), and the task waits for them on a timer of its loop, never blocking it.
 *
 * <p>Nothing is lost when a loop cannot run the task (shutting down): the journal's background writer forces what
 * waits, as it does for any asynchronous wait (within the journal's writer delay).
 *
 * <p>Thread-safety: {@link #queue} on the loop's own thread; each task is touched only by its loop's thread.
 */
final class LoopForces {
    /** The journal log's write path: its group commit forces the journal. */
    private final WritePath journal;
    private final ThreadLocal<LoopForce> perLoop = ThreadLocal.withInitial(LoopForce::new);

    LoopForces(WritePath journal) {
        this.journal = journal;
    }

    /** Forces the journal on {@code loop} (the calling thread's) after the tasks queued on it now. */
    void queue(ScheduledExecutorService loop) {
        perLoop.get().queue(loop);
    }

    /**
     * The journal's force on one event loop's thread: queued as a task (after the loop's other flush tasks of its
     * batch), re-armed as a timer while the journal's gather or another thread's force asks it to wait.
     */
    private final class LoopForce implements Runnable {
        private final Runnable timer = this::onTimer;
        private ScheduledExecutorService loop;
        private boolean queued;
        private boolean armed;
        private long armedAt;

        void queue(ScheduledExecutorService on) {
            if (queued) {
                return;
            }
            loop = on;
            queued = true;
            try {
                on.execute(this);
            } catch (RejectedExecutionException e) {
                queued = false;
                journal.requestFlush();
            }
        }

        @Override
        public void run() {
            queued = false;
            force();
        }

        private void onTimer() {
            armed = false;
            force();
        }

        private void force() {
            try {
                long again = journal.flushWhenGathered(null);
                if (again > 0) {
                    long at = System.nanoTime() + again;
                    if (!armed || at < armedAt) { // one timer, unless the journal now asks sooner (as LoopFlush's)
                        armed = true;
                        armedAt = at;
                        loop.schedule(timer, again, TimeUnit.NANOSECONDS);
                    }
                }
            } catch (WalException | RejectedExecutionException e) {
                // closed, failed, or the loop stops: the journal's writer forces (or fails) what waits
                armed = false;
                journal.requestFlush();
            }
        }
    }

}
