package io.walden.core.internal.commit;

/**
 * One asynchronous wait for a log position to pass a record: a node that {@link OrderedCompletions} links into its
 * queue, so that waiting allocates nothing beyond the node, and a node may be reused once it was told (an event
 * loop keeps one per request in flight). Told exactly once per wait, through {@link #complete} or {@link #fail}, on
 * the thread that moved the position (or found the wait failed).
 *
 * <p>Ownership: {@code lsn} and {@code waitingSince} are written by the thread that queues the node, before the push
 * that publishes it; {@code next} by the pusher and, after its {@code getAndSet} of the stack, the one drainer.
 */
public abstract class Completion {
    long lsn;
    long waitingSince;
    Completion next;

    protected Completion() {
    }

    /** The position passed the record at {@code lsn}. */
    protected abstract void complete(long lsn);

    /** The position can never pass it (the log failed, the replicas cannot confirm, the wait timed out). */
    protected abstract void fail(Throwable cause);
}
