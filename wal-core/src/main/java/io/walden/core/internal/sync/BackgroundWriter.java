package io.walden.core.internal.sync;

import io.walden.core.WalFailedException;
import io.walden.core.internal.commit.Activity;
import io.walden.core.internal.commit.GroupCommit;
import io.walden.core.internal.thread.Loop;
import io.walden.core.internal.thread.BackgroundThreads;
import io.walden.core.internal.thread.LoopRunner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;

/**
 * PostgreSQL's WAL writer: a thread ({@code walden-writer}) that writes what {@code OFF} appends left in the WAL
 * buffers into the files within {@code writeDelay} (then it survives the process's death), forces it within
 * {@code writerDelay} (then it survives the machine's), serves asynchronous appends (woken by {@link #wakeUp()}
 * so that no thread waits per future), and writes the periodic checkpoint.
 *
 * <p>Bounds: an {@code OFF} record appended at time t is in the file by t + writeDelay + one write, and forced by
 * t + writerDelay + one write and force, unless the log fails first (see {@code docs/durability.md}). An
 * {@code OFF} append {@link #nudge()}s the writer only while it sleeps for long: a read of a volatile flag.
 *
 * <p>Thread-safety: {@link #wakeUp()}, {@link #nudge()} and {@link #close()} from any thread; the rest runs on
 * its own thread.
 */
public final class BackgroundWriter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BackgroundWriter.class);

    private final GroupCommit commit;
    private final Activity activity;
    private final long delayNanos;
    private final long writeDelayNanos;
    private final long checkpointNanos;
    private final Runnable checkpoint;
    /** The writer's thread: {@link Writing} runs on it. */
    private final LoopRunner runner;
    /** True from when the writer decides to idle until its next turn begins: a wakeUp() then unparks it. */
    private volatile boolean sleeping;
    private volatile boolean wanted;
    /** True while the writer sleeps towards its next force with nothing left to write: an OFF append wakes it. */
    private volatile boolean idle;

    /**
     * @param delayNanos      writerDelay: the longest an OFF record waits to be forced
     * @param writeDelayNanos the longest an OFF record waits to be written into the file (at most delayNanos)
     */
    public BackgroundWriter(GroupCommit commit, Activity activity, long delayNanos, long writeDelayNanos, long checkpointNanos,
                            Runnable checkpoint, BackgroundThreads threads) {
        this.commit = commit;
        this.activity = activity;
        this.delayNanos = delayNanos;
        this.writeDelayNanos = Math.min(writeDelayNanos, delayNanos);
        this.checkpointNanos = checkpointNanos;
        this.checkpoint = checkpoint;
        this.runner = threads.runner(BackgroundThreads.Job.WRITER, new Writing());
    }

    public void start() {
        runner.start();
    }

    /** Asks for a flush now (an asynchronous append is waiting). Cheap when the writer is already awake. */
    public void wakeUp() {
        wanted = true;
        if (sleeping) {
            runner.wake();
        }
    }

    /**
     * An OFF record was appended: if the writer sleeps towards its next force with nothing to write, it wakes and
     * writes within writeDelay. Costs one volatile read when it is awake.
     */
    public void nudge() {
        if (idle) {
            idle = false;
            runner.wake();
        }
    }

    /**
     * One turn of the writer. Until its next force is due it idles, as long as the next write or force allows, and
     * writes what was published after each idle; once the force is due, or a flush is wanted, it forces everything
     * and, when due, writes the checkpoint.
     *
     * <p>The wake-up handshake (Dekker): wakeUp() stores {@code wanted} then reads {@code sleeping}; the writer stores
     * {@code sleeping} then reads {@code wanted} before it idles. So either the writer sees the request and does not
     * idle, or the waker sees it sleeping and wakes it (a wake-up before the park is kept by the runner).
     */
    private final class Writing implements Loop {
        private long lastCheckpoint = System.nanoTime();
        private long lastFlush = System.nanoTime();

        @Override
        public long doWork() {
            if (sleeping) { // back from an idle (or from deciding not to idle after all)
                sleeping = false;
                idle = false;
                if (!wanted && delayNanos - (System.nanoTime() - lastFlush) > 0) {
                    write();
                }
            }
            long untilFlush = delayNanos - (System.nanoTime() - lastFlush);
            if (!wanted && untilFlush > 0) {
                boolean pending = commit.hasUnwritten();
                idle = !pending;
                sleeping = true;
                if (!wanted && (pending || !commit.hasUnwritten())) {
                    return pending ? Math.min(writeDelayNanos, untilFlush) : untilFlush;
                }
                return 0; // asked for, or given records, while deciding: the next turn writes or flushes at once
            }
            flush();
            return 0;
        }

        private void flush() {
            wanted = false;
            lastFlush = System.nanoTime();
            Activity.Cell cell = activity.cell();
            // The flush reads segments by address: close() and truncation wait for us. It does not wake a dormant log.
            Activity.enterToFlush(cell);
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

        /** Whatever escaped a turn: the log fails (as a failed force fails it), and the writer goes on serving futures. */
        @Override
        public long onError(Throwable e) {
            commit.fail("the background writer failed: " + e, e);
            return 0;
        }
    }

    /** Writes the published records into the files without forcing them (nothing waits for them). */
    private void write() {
        Activity.Cell cell = activity.cell();
        Activity.enterToFlush(cell);
        try {
            commit.writeAll();
        } catch (Throwable e) {
            commit.fail("the background writer failed: " + e, e);
        } finally {
            Activity.exit(cell);
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

    /** Stops the writer after its current turn and waits for it; from a callback on its own thread, returns at once. */
    @Override
    public void close() {
        runner.stop(Duration.ofSeconds(30));
    }
}
