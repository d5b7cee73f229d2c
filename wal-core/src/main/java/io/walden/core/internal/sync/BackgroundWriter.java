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
import java.util.concurrent.atomic.AtomicLong;

/**
 * PostgreSQL's WAL writer: a thread ({@code walden-writer}) that writes what {@code OFF} appends left in the WAL
 * buffers into the files within {@code writeDelay} (then it survives the process's death), forces it within
 * {@code writerDelay} (then it survives the machine's), serves asynchronous appends (woken by {@link #wakeUp()}
 * so that no thread waits per future), and writes the periodic checkpoint.
 *
 * <p>Bounds: an {@code OFF} record appended at time t is in the file by t + writeDelay + one write, and forced by
 * t + writerDelay + one write and force, unless the log fails first (see {@code docs/durability.md}). An
 * {@code OFF} append {@link #nudge}s the writer only while it sleeps for long: a read of a volatile flag.
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
     * The highest LSN of an OFF record appended ({@link #nudge}): the records the writer must write within writeDelay.
     * Records waited for by a commit (LOCAL and above) are written and forced by their commit's flush: a writer that
     * also woke for them, every writeDelay while they are in flight, took a turn every 2 ms per busy log (32,000 turns a
     * second for 64 logs over HTTP, each a wake-up and most a {@code pwrite} racing the flush).
     */
    private final AtomicLong offNoted = new AtomicLong(-1);

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
     * The OFF record at {@code lsn} was appended: the writer writes it within writeDelay, and if it sleeps towards its
     * next force with nothing to write, it wakes. Costs a read and, for a record past the last one noted, a CAS of
     * {@link #offNoted}, then one volatile read when the writer is awake.
     */
    public void nudge(long lsn) {
        for (long noted = offNoted.get(); noted < lsn && !offNoted.compareAndSet(noted, lsn); noted = offNoted.get()) {
            Thread.onSpinWait();
        }
        if (idle) {
            idle = false;
            runner.wakeBy(writeDeadline(System.nanoTime()));
        }
    }

    /**
     * When the writer must have written an OFF record appended at {@code now}: within writeDelay, but not at once. A
     * write per OFF append cost a wake-up of the writer's thread and a {@code pwrite} each, per log: with 16 busy logs,
     * 0.46 cores of writer threads against 0.07 for one log (2026-11-27, wrk at {@code off}). So the deadline is put
     * off, and rounded down to a grid of half writeDelay, so that the writers of every log nudged in the same half
     * writeDelay are due at the same moment and run on one wake-up of a thread of their group: an OFF record is written
     * between half a writeDelay and a writeDelay after its append (plus the write itself).
     */
    private long writeDeadline(long now) {
        long at = now + writeDelayNanos;
        long grid = Math.max(1, writeDelayNanos / 2);
        return at - Math.floorMod(at, grid);
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
                boolean pending = offUnwritten();
                idle = !pending;
                sleeping = true;
                // Dekker with nudge(): idle is stored before offNoted is read again, nudge() notes before it reads idle
                if (!wanted && (pending || !offUnwritten())) {
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

    /** Whether an OFF record is published and not yet in the files: the writer owes it a write within writeDelay. */
    private boolean offUnwritten() {
        return commit.isUnwritten(offNoted.get());
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
