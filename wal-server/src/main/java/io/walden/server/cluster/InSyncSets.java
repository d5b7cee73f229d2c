package io.walden.server.cluster;

import io.walden.core.Wal;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.primary.ReplicaStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Keeps the in-sync set of each log led here (docs/cluster.md, "Who may lead a log", rules 1, 3 and 4), from what the
 * replication endpoint sees of its replicas:
 *
 * <ul>
 *   <li>every in-sync replica is waited for at {@code on} and above: the log's own policy is {@code FIRST n} of them
 *       (none while the primary is in sync alone);</li>
 *   <li>an in-sync replica that has not been streaming, or whose flush lags, for {@code lagMillis} is dropped: first in
 *       the record (a versioned write that only the primary of the record's epoch can make), then from the waits, which
 *       releases the commits held for it. A refused drop means this server was deposed: the log stops taking appends;</li>
 *   <li>a streaming replica whose flushed position is within {@link #CLOSE_ENOUGH} of the log's is waited for from then
 *       on, and added to the record once it flushed past the log's end as it was then: it holds every record
 *       acknowledged before, and every later acknowledgement waited for it.</li>
 * </ul>
 *
 * <p>Thread-safety: {@link #check} from one thread at a time (the keeper's).
 */
final class InSyncSets {
    private static final Logger LOG = LoggerFactory.getLogger(InSyncSets.class);
    /** How far behind a replica may be when it starts being waited for: a short wait for the commits meanwhile. */
    static final long CLOSE_ENOUGH = 1L << 20;

    private final PlacedLogs logs;
    private final long lagNanos;
    /** By log, by replica: since when an in-sync replica has not been acknowledging. */
    private final Map<String, Map<String, Long>> absentSince = new HashMap<>();
    /** By log, by replica: a joining replica's target, the log's end when the waits began to include it. */
    private final Map<String, Map<String, Long>> joining = new HashMap<>();
    /** By log: when its record was last read from ZooKeeper. */
    private final Map<String, Long> readAt = new HashMap<>();
    /**
     * How often the record of a log led here is read again. Only this primary writes it while it leads, but for one
     * change: a replica that lost its copy takes itself out ({@link LogLeadership#leave}), and must be seen to be
     * waited for again and added back once it has caught up.
     */
    static final long REREAD_NANOS = 1_000_000_000L;

    InSyncSets(PlacedLogs logs, long lagMillis) {
        this.logs = logs;
        this.lagNanos = lagMillis * 1_000_000L;
    }

    /** The policy that waits for every in-sync server but {@code self}; null when {@code self} is alone. */
    static SyncPolicy policyOf(Set<String> inSync, String self) {
        Set<String> others = new TreeSet<>(inSync);
        others.remove(self);
        return others.isEmpty() ? null
                : SyncPolicy.parse("FIRST " + others.size() + " (" + String.join(", ", others) + ")");
    }

    /** One look at every log led here. */
    void check() {
        logs.led().forEach((log, record) -> {
            try {
                check(log, record);
            } catch (LeadershipRefusedException e) {
                logs.deposed(log, e.getMessage());
                absentSince.remove(log);
                joining.remove(log);
            } catch (Exception e) {
                LOG.warn("Could not keep log {}'s in-sync set: {}; trying again", log, e.toString());
            }
        });
        absentSince.keySet().retainAll(logs.led().keySet());
        joining.keySet().retainAll(logs.led().keySet());
        readAt.keySet().retainAll(logs.led().keySet());
    }

    private void check(String log, LeadershipRecord known) throws Exception {
        Wal wal = logs.log(log).orElse(null);
        if (wal == null) {
            return;
        }
        LeadershipRecord record = known;
        long at = System.nanoTime();
        if (at - readAt.getOrDefault(log, at - REREAD_NANOS) >= REREAD_NANOS) {
            readAt.put(log, at);
            LeadershipRecord stored = logs.leadership().read(log);
            if (!logs.self().equals(stored.primary()) || stored.epoch() != known.epoch()) {
                throw new LeadershipRefusedException("log " + log + ": " + (stored.isNone() ? "no primary"
                        : stored.primary() + " leads epoch " + stored.epoch()) + ", not " + logs.self() + " in epoch "
                        + known.epoch());
            }
            if (stored.version() != known.version()) {
                record = stored;
                logs.recorded(log, record);
            }
        }
        Map<String, ReplicaStatus> seen = new HashMap<>();
        logs.endpoint().replicaStatus(log).forEach(s -> seen.put(s.name(), s));
        long now = System.nanoTime();
        LeadershipRecord current = record;
        Map<String, Long> absent = absentSince.computeIfAbsent(log, l -> new HashMap<>());
        for (String replica : record.inSync()) {
            if (replica.equals(logs.self())) {
                continue;
            }
            ReplicaStatus s = seen.get(replica);
            if (s != null && s.isStreaming() && s.flushLagMillis() * 1_000_000L < lagNanos) {
                absent.remove(replica);
                continue;
            }
            long since = absent.computeIfAbsent(replica, r -> now);
            if (now - since >= lagNanos) {
                current = logs.leadership().shrink(log, logs.self(), current.epoch(), replica);
                absent.remove(replica);
                logs.recorded(log, current); // the waits follow below, in this pass: what waited for it goes on
            }
        }
        Map<String, Long> targets = joining.computeIfAbsent(log, l -> new HashMap<>());
        targets.keySet().removeIf(r -> {
            ReplicaStatus s = seen.get(r);
            return s == null || !s.isStreaming();
        });
        for (ReplicaStatus s : seen.values()) {
            if (current.isInSync(s.name()) || !s.isStreaming()) {
                continue;
            }
            Long target = targets.get(s.name());
            if (target != null && s.flushLagMillis() * 1_000_000L >= lagNanos) { // joining too slowly: not waited for
                targets.remove(s.name());
                continue;
            }
            if (target == null && wal.flushedLsn() - s.flushLsn() <= CLOSE_ENOUGH) {
                targets.put(s.name(), -1L); // waited for from the policy below on
            } else if (target != null && target > 0 && s.flushLsn() >= target) {
                current = logs.leadership().expand(log, logs.self(), current.epoch(), s.name());
                targets.remove(s.name());
                logs.recorded(log, current);
            }
        }
        Set<String> waitedFor = new TreeSet<>(current.inSync());
        waitedFor.addAll(targets.keySet());
        SyncPolicy wanted = policyOf(waitedFor, logs.self());
        if (!Objects.equals(wanted, logs.endpoint().logPolicy(log))) {
            logs.endpoint().logPolicy(log, wanted);
        }
        long end = wal.insertLsn(); // after the policy: whatever was acknowledged before lies below
        targets.replaceAll((r, t) -> t < 0 ? end : t);
    }

}
