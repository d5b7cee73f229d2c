package io.walden.core.internal.commit;

/**
 * Told about every completed flush, on the leader's thread, right after the flushed position moved.
 * Implementations must be quick and must not allocate (they run inside the commit path).
 */
public interface FlushObserver {
    FlushObserver NONE = (nanos, bytes, commits) -> { };

    /**
     * @param nanos   how long the force took
     * @param bytes   how far the flushed position moved
     * @param commits durable appends that waited for a flush since the previous one: how many commits this
     *                flush served, give or take the few that arrived while it ran
     */
    void onFlush(long nanos, long bytes, long commits);
}
