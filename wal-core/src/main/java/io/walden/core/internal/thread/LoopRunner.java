package io.walden.core.internal.thread;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs a {@link Loop} on a daemon thread of its own (Agrona's {@code AgentRunner}): calls {@link Loop#doWork()},
 * idles as long as it asked, by parking, until {@link #wake()} or {@link #stop} ends the idle early, and hands
 * whatever the work threw to {@link Loop#onError}. The one idle strategy of the log's background jobs: park until a
 * deadline or a wake-up. (Short waits for another thread's step spin, yield, then park: {@code commit.Backoff}.)
 *
 * <p>Memory ordering: {@link #wake()} is {@link LockSupport#unpark}: a wake-up that comes after the job's last look
 * at what it has to do and before the idle is kept (the idle then ends at once). One that comes while the job is
 * working may be taken by a park inside the work (a lock, a latch, a future of java.util.concurrent), so the job
 * must look at its own state (a volatile flag the waker set before waking it) on each turn, and take a wake-up as a
 * hint only. An idle may also end early for no reason.
 *
 * <p>Thread-safety: {@link #start}, {@link #wake}, {@link #isRunning} and {@link #stop} from any thread.
 */
public final class LoopRunner {
    private final Loop loop;
    private final Thread thread;
    private volatile boolean running = true;

    /** A runner for {@code loop} on a thread named {@code name} (see {@link WaldenThreads}); not started. */
    public LoopRunner(String name, Loop loop) {
        this.loop = loop;
        this.thread = WaldenThreads.daemon(this::run, name);
    }

    public void start() {
        thread.start();
    }

    /** Ends the current idle, or the next one if the loop is working now. */
    public void wake() {
        LockSupport.unpark(thread);
    }

    /** False once {@link #stop} was called, or once the loop ended itself ({@link Loop#onError} said {@link Loop#STOP}). */
    public boolean isRunning() {
        return running;
    }

    /**
     * Ends the loop after its current call and waits up to {@code timeout} for the thread to end. Called on the loop's
     * own thread (from a callback of its work), it returns at once: the loop ends after the current call.
     *
     * @return true when the thread has ended
     */
    public boolean stop(Duration timeout) {
        running = false;
        LockSupport.unpark(thread);
        if (Thread.currentThread() == thread) {
            return false;
        }
        try {
            thread.join(Math.max(1, timeout.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }

    /**
     * Interrupts the loop's thread, for a job blocked in I/O that a stop did not end in time (an upload). Never for a
     * job that writes or forces the log's files: an interrupt closes a {@code FileChannel} under it.
     */
    public void interrupt() {
        thread.interrupt();
    }

    private void run() {
        while (running) {
            long idle;
            try {
                idle = loop.doWork();
            } catch (Throwable failure) {
                idle = loop.onError(failure);
                if (idle == Loop.STOP) {
                    running = false;
                    return;
                }
            }
            if (idle > 0 && running) {
                LockSupport.parkNanos(this, idle);
            }
        }
    }
}
