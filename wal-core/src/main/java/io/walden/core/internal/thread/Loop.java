package io.walden.core.internal.thread;

/**
 * One background job of a log, as a unit of work that a {@link LoopRunner} calls again and again on a thread of its
 * own (Agrona's {@code Agent}): the segment preparer, the WAL writer, the archiver. The job says how long it may idle
 * after each call, since each knows its own clock (the writer its next force, the archiver its poll); the runner
 * idles that long, or until {@link LoopRunner#wake()}.
 *
 * <p>Thread-safety: every method is called on the runner's thread only.
 */
public interface Loop {
    /** The return of {@link #onError} that ends the loop. */
    long STOP = -1;

    /**
     * Does what is due now, without waiting for anything it could be woken for.
     *
     * @return how long to idle, in nanoseconds, before the next call: 0 to call again at once
     */
    long doWork() throws Exception;

    /**
     * {@link #doWork()} threw {@code failure}: log it, record it for whoever waits on this job, and say what next.
     * By default an {@link Error} ends the loop and anything else is retried after a second.
     *
     * @return how long to idle before the next try, in nanoseconds, or {@link #STOP} to end the loop
     */
    default long onError(Throwable failure) {
        return failure instanceof Error ? STOP : 1_000_000_000L;
    }
}
