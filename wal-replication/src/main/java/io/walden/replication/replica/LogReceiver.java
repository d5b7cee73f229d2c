package io.walden.replication.replica;

import io.walden.core.internal.thread.Loop;
import io.walden.core.internal.thread.LoopGroup;
import io.walden.core.internal.thread.LoopRunner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * One log's receiver on a replica of many logs: runs the tasks given it (the log's frames, its start, its settings)
 * one at a time, each after the one given before it, as a single-thread executor would, but as a {@link Loop} on the
 * replica's receiver threads ({@code walden-receivers-N}), which every log shares: a replica of a thousand logs does
 * not hold a thousand threads. A turn runs at most {@value #TASKS_PER_TURN} tasks, then lets the other logs have
 * theirs.
 *
 * <p>Thread-safety: {@link #execute}, {@link #shutdown} and {@link #awaitTermination} from any thread. The tasks run
 * on the group's threads, one at a time, each happening-after the one before (one turn at a time, the group's lock
 * between turns; the queue's hand-over within one).
 */
final class LogReceiver implements Executor, Loop {
    private static final Logger LOG = LoggerFactory.getLogger(LogReceiver.class);
    /** Tasks run in one turn at most: a log with a backlog yields to the others between batches. */
    static final int TASKS_PER_TURN = 16;
    /** The idle with nothing queued: {@link #execute} wakes it long before. */
    private static final long IDLE_NANOS = TimeUnit.HOURS.toNanos(1);

    private final String log;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final LoopRunner runner;
    private final CountDownLatch ended = new CountDownLatch(1);
    /**
     * Set once, under this receiver's monitor, as {@link #execute} adds under it: a turn that reads it true (volatile)
     * sees every task added before, and no task is added after.
     */
    private volatile boolean shutdown;

    /** Log {@code log}'s receiver on {@code group}, ready for tasks. */
    LogReceiver(LoopGroup group, String log) {
        this.log = log;
        this.runner = group.runner("walden-receiver of log " + log, this);
        runner.start();
    }

    /**
     * Runs {@code task} after every task given before it.
     *
     * @throws RejectedExecutionException once {@link #shutdown} was called
     */
    @Override
    public void execute(Runnable task) {
        synchronized (this) {
            if (shutdown) {
                throw new RejectedExecutionException("the receiver of log " + log + " is stopped");
            }
            tasks.add(task);
        }
        runner.wake();
    }

    /** Takes no more tasks; the loop ends once it ran those given before. */
    void shutdown() {
        synchronized (this) {
            shutdown = true;
        }
        runner.wake();
    }

    /** Waits until the tasks given before {@link #shutdown} have run (or the timeout passed). */
    boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return ended.await(timeout, unit);
    }

    @Override
    public long doWork() {
        boolean last = shutdown; // read before the queue: once it is true, nothing is added after what the queue holds
        for (int i = 0; i < TASKS_PER_TURN; i++) {
            Runnable task = tasks.poll();
            if (task == null) {
                if (last) {
                    ended.countDown();
                    return STOP;
                }
                return IDLE_NANOS;
            }
            try {
                task.run();
            } catch (Throwable e) { // a task's own failure: as an executor's thread would, the next task still runs
                LOG.error("A task of the receiver of log {} failed", log, e);
            }
        }
        return 0;
    }
}
