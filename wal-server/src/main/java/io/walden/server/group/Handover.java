package io.walden.server.group;

import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.replication.primary.ReplicaStatus;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.protocol.FrameDescriptor;
import io.walden.server.ReplicationRole;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * A switchover on the primary (docs/operations.md, "Replica groups"): refuse appends and let those in flight land,
 * wait until the target has flushed the log's end, record the handover in the epoch record, fence (closing
 * replication) and leave the latch. The target, the only candidate {@link ElectionRule} names then, elects itself;
 * this member follows it. If the target is not caught up in time, appends resume here in a new epoch.
 *
 * <p>Thread-safety: {@link #handOver} runs under the controller's lock, so that no step interleaves.
 */
final class Handover {
    private static final Logger LOG = LoggerFactory.getLogger(Handover.class);
    /** A switchover whose target has not taken over by then is undone: the old primary may lead again. */
    static final long TAKE_OVER_MILLIS = 15_000;
    /** How long the primary waits for in-flight appends to land and for its target to hold every record. */
    private static final long CATCH_UP_MILLIS = 10_000;

    private final FailoverController member;
    private final GroupCoordinator coordinator;
    private final ReplicationRole role;
    private final Wal wal;
    private final String name;

    Handover(FailoverController member, GroupCoordinator coordinator, ReplicationRole role, Wal wal, String name) {
        this.member = member;
        this.coordinator = coordinator;
        this.role = role;
        this.wal = wal;
        this.name = name;
    }

    /** @return the epoch record as handed over (its version is what the target's claim replaces) */
    EpochRecord handOver(String target) throws Exception {
        if (target.equals(name)) {
            throw new IllegalStateException("this member is already the primary");
        }
        Member t = coordinator.members().get(target);
        if (t == null) {
            throw new NoSuchElementException("no member named '" + target + "' in the group");
        }
        EpochRecord epoch = coordinator.epoch();
        if (t.state() != Member.State.REPLICA || epoch == null) {
            throw new IllegalStateException(target + " is not a replica following this primary (it is "
                    + t.state().wireName() + ")");
        }
        try {
            Map<String, Long> ends = role.pauseAndDrainAppends("switching over to " + target
                    + "; write to the new primary (see /admin/status)", CATCH_UP_MILLIS);
            String behind = ends == null ? null : caughtUp(target, ends);
            if (ends == null || behind != null) {
                member.resume(epoch); // refusing appends limited the logs' readers: a new epoch lifts that
                throw new IllegalStateException(ends == null ? "appends in flight did not finish within " + CATCH_UP_MILLIS
                        + " ms; appends resumed here" : target + " did not hold this primary's end of " + behind
                        + " within " + CATCH_UP_MILLIS + " ms; appends resumed here");
            }
            long end = ends.get(FrameDescriptor.DEFAULT_LOG);
            EpochRecord handedOver = coordinator.writeEpoch(
                    new EpochRecord(epoch.epoch(), name, epoch.startLsn(), target, end, -1), epoch);
            if (handedOver == null) {
                member.fence("the epoch record changed during the switchover");
                throw new IllegalStateException("the epoch record changed during the switchover; this member is no longer primary");
            }
            member.fence("handed over to " + target);
            coordinator.leaveLatch();
            LOG.info("Switchover: handed the group to {} at {}", target, Lsn.format(end));
            return handedOver;
        } catch (Exception e) {
            if (member.isPrimary() && wal.status().appendsRefusedReason() != null) {
                member.fence("the switchover failed: " + e); // never stay a primary that refuses appends and leads
            }
            throw e;
        }
    }

    /**
     * Waits until {@code target} has flushed every log's end (the election then names it once it holds
     * {@code default}'s: the record carries that one).
     *
     * @return null once it has; else the first log it does not hold the end of, with both positions
     */
    private String caughtUp(String target, Map<String, Long> ends) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CATCH_UP_MILLIS);
        String behind = null;
        while (System.nanoTime() < deadline) {
            behind = firstBehind(target, ends);
            if (behind == null) {
                return null;
            }
            Thread.sleep(5);
        }
        return behind;
    }

    private String firstBehind(String target, Map<String, Long> ends) {
        ReplicationServer server = role.server();
        for (Map.Entry<String, Long> e : ends.entrySet()) {
            long flushed = server == null ? -1 : server.replicaStatus(e.getKey()).stream()
                    .filter(r -> r.name().equals(target)).mapToLong(ReplicaStatus::flushLsn).findFirst().orElse(-1);
            if (flushed < e.getValue()) {
                return "log " + e.getKey() + " (" + Lsn.format(e.getValue()) + "; it holds "
                        + (flushed < 0 ? "nothing streamed" : Lsn.format(flushed)) + ")";
            }
        }
        return null;
    }

    /** Waits until the epoch record names {@code target} in a later epoch than the one handed over. */
    static EpochRecord awaitTakeOver(Supplier<EpochRecord> view, String target, EpochRecord handedOver)
            throws InterruptedException, TimeoutException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TAKE_OVER_MILLIS);
        while (System.nanoTime() < deadline) {
            EpochRecord now = view.get();
            if (now != null && now.primary().equals(target) && now.epoch() > handedOver.epoch()) {
                return now;
            }
            Thread.sleep(20);
        }
        throw new TimeoutException(target + " did not take over within " + TAKE_OVER_MILLIS + " ms");
    }
}
