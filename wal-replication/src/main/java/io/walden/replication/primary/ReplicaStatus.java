package io.walden.replication.primary;

/**
 * One connected replica as its primary sees it (PostgreSQL's {@code pg_stat_replication}).
 *
 * @param state      {@code catchup} until the replica caught up with the backlog it had when it connected, then
 *                   {@code streaming}
 * @param sentLsn    the end of what the primary has sent it
 * @param writeLsn   what it reported written (to its OS)
 * @param flushLsn   what it reported flushed (durable on it)
 * @param applyLsn   what it reported applied (visible, or taken by its application's applier)
 * @param writeLagMillis from sending a position until the replica reported it written; -1 until known (same for
 *                       the flush and apply lags)
 * @param syncState  {@code sync} or {@code quorum} when it counts for the synchronous policy now, {@code potential}
 *                   when named by the policy but still catching up (or beyond the policy's first n), {@code async}
 *                   when not named
 */
public record ReplicaStatus(String name, String state, long sentLsn, long writeLsn, long flushLsn, long applyLsn,
                            long writeLagMillis, long flushLagMillis, long applyLagMillis, String syncState) {
    /** Caught up and counted by the synchronous policy (not catching up on an old backlog). */
    public boolean isStreaming() {
        return "streaming".equals(state);
    }
}
