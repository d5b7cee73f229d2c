package io.walden.server.group;

import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.replica.PrimaryIdentity;
import io.walden.server.ReplicationRole;
import io.walden.server.config.ServerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Opens a group member's log before it takes part: its own when it has one; else a copy of the primary's (a new
 * replica, as {@code --replicate-from} makes one), or, in a new group where this member is the candidate and wins the
 * latch, a new log. Only the latch holder creates a log while there is no epoch record, so a new group has one.
 */
final class MemberLog {
    private static final Logger LOG = LoggerFactory.getLogger(MemberLog.class);

    private MemberLog() {
    }

    /** Waits (logging every 5 s) until one of the three is possible. */
    static Wal open(ServerConfig config, GroupCoordinator coordinator, SyncPolicy policy, WalConfig.Builder log)
            throws Exception {
        if (config.hasLog()) {
            return Wal.open(log.build());
        }
        long lastNote = 0;
        while (true) {
            EpochRecord epoch = coordinator.epoch();
            Map<String, Member> live = coordinator.members();
            if (epoch != null) {
                Member primary = live.get(epoch.primary());
                coordinator.leaveLatch(); // a group exists: this member only waits for its primary
                if (primary != null && primary.state() == Member.State.PRIMARY) {
                    LOG.info("Creating this member's log as a copy of the primary {}'s", primary.name());
                    PrimaryIdentity id = ReplicationRole.fetchIdentity(config, primary.replicationAddress());
                    return id.openReplicaLog(log);
                }
            } else if (config.name().equals(ElectionRule.decide(null, live, policy).candidate())) {
                coordinator.joinLatch();
                if (coordinator.leads() && coordinator.epoch() == null) {
                    LOG.info("Creating a new log: this member starts the group");
                    return Wal.open(log.build());
                }
            } else {
                coordinator.leaveLatch();
            }
            if (System.nanoTime() - lastNote > TimeUnit.SECONDS.toNanos(5)) {
                lastNote = System.nanoTime();
                LOG.info("Waiting for the group's primary before creating this member's log ({} members: {})",
                        live.size(), live.keySet());
            }
            Thread.sleep(FailoverController.TICK_MILLIS);
        }
    }
}
