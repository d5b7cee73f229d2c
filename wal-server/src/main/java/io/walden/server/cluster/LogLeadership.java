package io.walden.server.cluster;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Who may lead each log of a cluster, kept in ZooKeeper beside the placement (docs/cluster.md, "Who may lead a log"):
 * one {@link LeadershipRecord} per log at {@code BASE/logs/LOG/leadership}. Helix decides where a log's primary and
 * replicas are; this decides whether a server Helix names may take the log's writes. Every change is a versioned write
 * (compare-and-set), so two servers that read the same record cannot both act on it:
 *
 * <ul>
 *   <li>{@link #claim}: a server becomes primary in the next epoch, only if the record says it is in sync (or no server
 *       led the log yet). It must have stopped following the old primary before, so that every acknowledgement it sent
 *       there covered records it holds.</li>
 *   <li>{@link #shrink}: the primary drops a replica that stopped acknowledging, before it acknowledges a commit without
 *       it; only the primary of the record's epoch may, so a deposed primary, whose replicas stopped answering it,
 *       cannot acknowledge any more.</li>
 *   <li>{@link #expand}: the primary adds a replica that holds every record it acknowledged, after it began waiting for
 *       that replica's acknowledgements.</li>
 * </ul>
 *
 * <p>Thread-safety: any thread; every method is one round trip (or two) to ZooKeeper, never called on a hot path.
 */
public final class LogLeadership {
    private static final Logger LOG = LoggerFactory.getLogger(LogLeadership.class);

    /** How many times a change is tried against a record that keeps changing before it gives up. */
    private static final int MAX_ATTEMPTS = 20;

    private final CuratorFramework client;
    private final String base;

    /** @param base the cluster's Walden node, e.g. {@code /walden/CLUSTER} */
    public LogLeadership(CuratorFramework client, String base) {
        this.client = client;
        this.base = base;
    }

    private String path(String log) {
        return base + "/logs/" + log + "/leadership";
    }

    /** Log {@code log}'s record, or {@link LeadershipRecord#NONE} when no server led it yet. */
    public LeadershipRecord read(String log) throws Exception {
        Stat stat = new Stat();
        try {
            byte[] bytes = client.getData().storingStatIn(stat).forPath(path(log));
            return LeadershipRecord.fromJson(bytes, stat.getVersion());
        } catch (KeeperException.NoNodeException e) {
            return LeadershipRecord.NONE;
        }
    }

    /**
     * Server {@code self} becomes log {@code log}'s primary in the epoch after {@code seen}'s (the record it read), with
     * the same in-sync set (itself among them; the first primary of a log is its only member).
     *
     * @return the record written
     * @throws LeadershipRefusedException when {@code self} is not in sync, or the record changed since {@code seen}
     */
    public LeadershipRecord claim(String log, String self, LeadershipRecord seen) throws Exception {
        return claim(log, self, seen, 0);
    }

    /**
     * As {@link #claim(String, String, LeadershipRecord)}, in an epoch numbered at least {@code atLeastEpoch} (past the
     * epochs the server's copy of the log already holds, so that the record and the log's history number it alike).
     */
    public LeadershipRecord claim(String log, String self, LeadershipRecord seen, int atLeastEpoch) throws Exception {
        if (!seen.isNone() && !seen.isInSync(self)) {
            throw new LeadershipRefusedException("log " + log + ": " + self + " is not in sync (in sync: " + seen.inSync()
                    + ", epoch " + seen.epoch() + "), so it may lack acknowledged records");
        }
        Set<String> inSync = new TreeSet<>(seen.isNone() ? Set.of(self) : seen.inSync());
        if (!seen.isNone() && !seen.steppedDown() && !self.equals(seen.primary())) {
            // A failover: the old primary did not hand over (it died, or is cut off, and is deposed by this very
            // write). Keeping it in sync would make every commit here wait for it until the lag drops it; taking it
            // out is safe by the rule (the others hold every acknowledged record), and it joins again as a replica.
            inSync.remove(seen.primary());
        }
        LeadershipRecord next = write(log, new LeadershipRecord(Math.max(seen.epoch() + 1, atLeastEpoch), self, inSync,
                false, seen.version()));
        LOG.info("Log {}: {} leads in epoch {} (in sync: {})", log, self, next.epoch(), next.inSync());
        return next;
    }

    /**
     * The primary {@code self}, in epoch {@code epoch}, drops {@code replica} from the in-sync set.
     *
     * @throws LeadershipRefusedException when {@code self} no longer leads in that epoch (a deposed primary), or for the
     *                                    primary itself
     */
    public LeadershipRecord shrink(String log, String self, int epoch, String replica) throws Exception {
        if (replica.equals(self)) {
            throw new IllegalArgumentException("the primary cannot drop itself from the in-sync set");
        }
        LeadershipRecord next = update(log, now -> {
            checkLeading(log, now, self, epoch);
            Set<String> inSync = new TreeSet<>(now.inSync());
            return inSync.remove(replica) ? new LeadershipRecord(epoch, self, inSync, now.steppedDown(), now.version())
                    : null;
        });
        LOG.warn("Log {}: {} is no longer in sync (in sync: {})", log, replica, next.inSync());
        return next;
    }

    /**
     * The primary {@code self}, in epoch {@code epoch}, adds {@code replica}, which holds every record it acknowledged
     * and whose acknowledgements it already waits for.
     *
     * @throws LeadershipRefusedException when {@code self} no longer leads in that epoch
     */
    public LeadershipRecord expand(String log, String self, int epoch, String replica) throws Exception {
        LeadershipRecord next = update(log, now -> {
            checkLeading(log, now, self, epoch);
            Set<String> inSync = new TreeSet<>(now.inSync());
            return inSync.add(replica) ? new LeadershipRecord(epoch, self, inSync, now.steppedDown(), now.version())
                    : null;
        });
        LOG.info("Log {}: {} is in sync (in sync: {})", log, replica, next.inSync());
        return next;
    }

    /**
     * Server {@code self}, a replica that holds no copy of log {@code log} (its disk was replaced or wiped under the same
     * name, or its copy was dropped here), takes itself out of the in-sync set: the set names servers, and a new,
     * partial copy must not be promoted as if it held every acknowledged record. Removing a member keeps the rule (the
     * others still hold every acknowledged record); the primary stops waiting for this server at its next look, and adds
     * it again once it has caught up (rule 4).
     *
     * <p>Nothing changes while the record names {@code self} as primary: a primary that stepped down is still named
     * until the next one claims the log (and a claim by a server without a copy is refused anyway).
     *
     * @return the record as it is after
     */
    public LeadershipRecord leave(String log, String self) throws Exception {
        LeadershipRecord before = read(log);
        LeadershipRecord next = update(log, now -> {
            if (!now.isInSync(self) || self.equals(now.primary())) {
                return null;
            }
            Set<String> inSync = new TreeSet<>(now.inSync());
            inSync.remove(self);
            return new LeadershipRecord(now.epoch(), now.primary(), inSync, now.steppedDown(), now.version());
        });
        if (before.isInSync(self) && !next.isInSync(self)) {
            LOG.warn("Log {}: {} holds no copy of it, and leaves the in-sync set until it has caught up (in sync: {})",
                    log, self, next.inSync());
        }
        return next;
    }

    /**
     * The primary {@code self}, in epoch {@code epoch}, records that it stepped down in a planned hand-over, after it
     * added the replicas that hold its end to the in-sync set: whichever of them leads next takes over without a
     * failover ({@code walden.cluster.failovers} counts the others).
     *
     * @throws LeadershipRefusedException when {@code self} no longer leads in that epoch
     */
    public LeadershipRecord stepDown(String log, String self, int epoch) throws Exception {
        return update(log, now -> {
            checkLeading(log, now, self, epoch);
            return now.steppedDown() ? null : new LeadershipRecord(epoch, self, now.inSync(), true, now.version());
        });
    }

    /** Removes log {@code log}'s nodes: its record and its creation settings (the log was deleted from the cluster). */
    public void delete(String log) throws Exception {
        try {
            client.delete().deletingChildrenIfNeeded().forPath(base + "/logs/" + log);
        } catch (KeeperException.NoNodeException e) {
            // already gone
        }
    }

    private static void checkLeading(String log, LeadershipRecord now, String self, int epoch)
            throws LeadershipRefusedException {
        if (!self.equals(now.primary()) || now.epoch() != epoch) {
            throw new LeadershipRefusedException("log " + log + ": " + self + " no longer leads epoch " + epoch + " ("
                    + (now.isNone() ? "no primary" : now.primary() + " leads epoch " + now.epoch()) + ")");
        }
    }

    /** A change of the record as read: the record to write (at the version read), or null for nothing to write. */
    @FunctionalInterface
    private interface Change {
        LeadershipRecord apply(LeadershipRecord now) throws LeadershipRefusedException;
    }

    /**
     * Reads the record, applies {@code change}, and writes the result if the record did not change meanwhile; reads and
     * applies again when it did (another writer: the primary's keeper and a hand-over, or a replica leaving). Only what
     * {@code change} throws refuses: a version conflict alone never deposes a primary.
     *
     * @return the record written, or as read when there was nothing to write
     */
    private LeadershipRecord update(String log, Change change) throws Exception {
        for (int attempt = 1; ; attempt++) {
            LeadershipRecord now = read(log);
            LeadershipRecord next = change.apply(now);
            if (next == null) {
                return now;
            }
            try {
                return write(log, next);
            } catch (LeadershipRefusedException changed) {
                if (attempt == MAX_ATTEMPTS) {
                    throw changed;
                }
                // a random pause, longer each time: two writers that collided once do not collide again in step
                Thread.sleep(ThreadLocalRandom.current().nextInt(1, 5 * attempt + 1));
            }
        }
    }

    /** Writes {@code next} if the node is still at {@code next.version()} (absent for -1). */
    private LeadershipRecord write(String log, LeadershipRecord next) throws Exception {
        try {
            if (next.version() < 0) {
                client.create().creatingParentContainersIfNeeded().forPath(path(log), next.toJson());
            } else {
                client.setData().withVersion(next.version()).forPath(path(log), next.toJson());
            }
        } catch (KeeperException.BadVersionException | KeeperException.NodeExistsException
                 | KeeperException.NoNodeException e) {
            throw new LeadershipRefusedException("log " + log + ": the leadership record changed meanwhile; read it again");
        }
        return new LeadershipRecord(next.epoch(), next.primary(), next.inSync(), next.steppedDown(), next.version() + 1);
    }
}
