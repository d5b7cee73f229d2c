package io.walden.replication.primary;

import io.walden.replication.policy.SyncPolicy;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One connected replica as its primary sees it (PostgreSQL's {@code pg_stat_replication}).
 *
 * @param state      {@code catchup} until the replica caught up with the backlog it had when it connected, then
 *                   {@code streaming}
 * @param sentLsn    the end of what the primary has sent it
 * @param writeLsn   what it reported written (to its OS)
 * @param flushLsn   what it reported flushed (durable on it)
 * @param applyLsn   what it reported applied (visible, or taken by its application's applier)
 * @param writeLagMillis from sending a position until the replica reported it written, or, while a position sent
 *                       has waited longer than that, its wait (a stuck replica's lag grows); -1 when there is none to
 *                       show (same for the flush and apply lags)
 * @param syncState  {@code sync} or {@code quorum} when it counts for the synchronous policy now, {@code potential}
 *                   when named by the policy but still catching up (or beyond the policy's first n), {@code async}
 *                   when not named
 */
public record ReplicaStatus(String name, String state, long sentLsn, long writeLsn, long flushLsn, long applyLsn,
                            long writeLagMillis, long flushLagMillis, long applyLagMillis, String syncState) {
    /**
     * The connected replicas in name order. For {@code FIRST n}, the n highest-priority streaming replicas are
     * {@code sync} and the other named ones {@code potential}; for {@code ANY n}, every streaming named one is {@code quorum}.
     */
    static List<ReplicaStatus> of(Map<String, ReplicaState> replicas, SyncPolicy p) {
        Set<String> sync = new HashSet<>();
        if (p != null && !p.isQuorum()) {
            for (String name : p.names()) { // priority order
                ReplicaState s = replicas.get(name);
                if (s != null && s.streaming && sync.size() < p.count()) {
                    sync.add(name);
                }
            }
        }
        List<ReplicaStatus> out = new ArrayList<>();
        for (ReplicaState s : replicas.values()) {
            boolean named = p != null && p.names().contains(s.name);
            String syncState = !named ? "async" : !s.streaming ? "potential" : p.isQuorum() ? "quorum"
                    : sync.contains(s.name) ? "sync" : "potential";
            long now = System.nanoTime();
            out.add(new ReplicaStatus(s.name, s.streaming ? "streaming" : "catchup", s.sentLsn, s.written, s.flushed,
                    s.applied, lag(s.writeLagMillis, s.waitingMillis(s.written, now)),
                    lag(s.flushLagMillis, s.waitingMillis(s.flushed, now)),
                    lag(s.applyLagMillis, s.waitingMillis(s.applied, now)), syncState));
        }
        out.sort(Comparator.comparing(ReplicaStatus::name));
        return out;
    }

    /** The lag shown: the last measured, or the wait of what is outstanding when that is longer. */
    private static long lag(long measured, long waiting) {
        return waiting > Math.max(measured, 0) ? waiting : measured;
    }

    /** Caught up and counted by the synchronous policy (not catching up on an old backlog). */
    public boolean isStreaming() {
        return "streaming".equals(state);
    }
}
