package io.walden.core.sync;

import io.walden.core.WalFailedException;
import io.walden.core.commit.Activity;
import io.walden.core.commit.GroupCommit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * PostgreSQL's WAL writer: a thread ({@code walden-writer}) that forces what {@code OFF} appends left
 * unflushed at most {@code writerDelay} after they were written, serves asynchronous appends (woken by
 * {@link #wakeUp()} so that no thread waits per future), and writes the periodic checkpoint.
 *
 * <p>Bound: an {@code OFF} record written at time t is forced by t + writerDelay + the duration of one
 * force, unless the log fails first (see {@code docs/durability.md}).
 *
 * <p>Thread-safety: {@link #wakeUp()} and {@link #close()} from any thread; the rest runs on its own thread.
 */
public final class BackgroundWriter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BackgroundWriter.class);

    private final GroupCommit commit;
    private final Activity activity;
    private final long delayNanos;
    private final long checkpointNanos;
    private final Runnable checkpoint;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile boolean sleeping;
    private volatile boolean wanted;

    public BackgroundWriter(GroupCommit commit, Activity activity, long delayNanos, long checkpointNanos, Runnable checkpoint) {
        this.commit = commit;
        this.activity = activity;
        this.delayNanos = delayNanos;
        this.checkpointNanos = checkpointNanos;
        this.checkpoint = checkpoint;
        this.thread = new Thread(this::run, "walden-writer");
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    /** Asks for a flush now (an asynchronous append is waiting). Cheap when the writer is already awake. */
    public void wakeUp() {
        wanted = true;
        if (sleeping) {
            LockSupport.unpark(thread);
        }
    }

    private void run() {
        long lastCheckpoint = System.nanoTime();
        while (running) {
            if (!wanted) {
                sleeping = true;
                if (!wanted) {
                    LockSupport.parkNanos(this, delayNanos);
                }
                sleeping = false;
            }
            wanted = false;
            Activity.Cell cell = activity.cell();
            Activity.enter(cell); // the flush reads segments by address: close() and truncation wait for us
            try {
                if (commit.failure() == null) {
                    commit.flushAll();
                } else {
                    commit.completeAsync();
                }
            } catch (WalFailedException e) {
                // already logged by the leader that failed; pending futures were failed with it
            } catch (Throwable e) {
                // This thread owns OFF records' way to disk and the asynchronous futures: if it cannot do its job, the
                // log must say so (failed, refusing appends, failing futures), never stay "ready" and hang.
                commit.fail("the background writer failed: " + e, e);
            } finally {
                Activity.exit(cell);
            }
            if (System.nanoTime() - lastCheckpoint >= checkpointNanos) {
                lastCheckpoint = System.nanoTime();
                runCheckpoint();
            }
        }
    }

    private void runCheckpoint() {
        try {
            checkpoint.run();
        } catch (Error e) {
            commit.fail("the background writer failed writing a checkpoint: " + e, e);
        } catch (RuntimeException e) {
            LOG.warn("Checkpoint failed (recovery will scan further back, nothing is lost): {}", e.toString());
        }
    }

    @Override
    public void close() {
        running = false;
        LockSupport.unpark(thread);
        if (Thread.currentThread() == thread) {
            return; // closed from a callback running on this thread: it stops after the current iteration
        }
        try {
            thread.join(TimeUnit.SECONDS.toMillis(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
