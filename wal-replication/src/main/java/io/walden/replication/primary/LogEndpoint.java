package io.walden.replication.primary;

import io.walden.core.Wal;
import io.walden.replication.policy.SyncPolicy;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a primary keeps for one of its logs: the log, the replicas streaming it now, their slots (in the log's own
 * {@code walden.slots}) and what releases its synchronous commits. A primary of one log has one; a primary of a store
 * one per log ({@link PrimaryLogs}), all under the endpoint's one policy.
 *
 * <p>Thread-safety: every method from any thread.
 */
final class LogEndpoint {
    final String name;
    final Wal wal;
    /** The log's id, read while it was open: a log reopened under its name with the same id is the same log. */
    final long logId;
    final Map<String, ReplicaState> replicas = new ConcurrentHashMap<>();
    final SlotStore slots;
    final SyncReleaser releaser;

    /** Takes the log's saved slots and makes truncation keep what they need, before any replica is accepted. */
    LogEndpoint(String name, Wal wal, long maxSlotRetainedBytes, SyncPolicy policy) {
        this.name = name;
        this.wal = wal;
        this.logId = wal.status().logId();
        this.slots = new SlotStore(wal, maxSlotRetainedBytes);
        this.releaser = new SyncReleaser(wal.replication().remoteWaits());
        wal.replication().retentionFloor(slots::retentionFloor);
        if (policy != null) {
            releaser.policy(policy, replicas);
        }
    }

    /** A replica reported on this log: releases the commits its policy now confirms. */
    void release() {
        releaser.release(replicas);
    }

    void policy(SyncPolicy policy) {
        releaser.policy(policy, replicas);
    }

    /** The endpoint stops: the last slot positions saved, waiting commits failed as unconfirmed (SyncReleaser#close). */
    void close() {
        slots.close();
        if (!wal.isClosed()) {
            wal.replication().retentionFloor(null);
        }
        releaser.close();
    }

    /**
     * The log was closed and opened again as {@code reopened} (its settings changed): this endpoint stops, saving its
     * slots' last positions, and its successor takes them back from the log's directory, so that truncation of the
     * reopened log keeps what they need.
     */
    LogEndpoint reopenedAs(Wal reopened, long maxSlotRetainedBytes, SyncPolicy policy) {
        close();
        return new LogEndpoint(name, reopened, maxSlotRetainedBytes, policy);
    }

    /** The log was deleted: its slots went with its directory, and nothing is saved. */
    void deleted() {
        slots.abandon();
        releaser.close();
    }
}
