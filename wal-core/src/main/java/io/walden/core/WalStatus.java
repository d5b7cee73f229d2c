package io.walden.core;

import io.walden.core.archive.ArchiverStatus;
import io.walden.core.internal.WalParts;
import io.walden.core.internal.segment.SegmentFiles;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What an operator, a health check or an admin endpoint reads about a log beyond its positions: its identity, what
 * recovery found, its segments, whether it failed, its role and epoch, its archiving. {@link Wal#status()}.
 *
 * <p>A live view, not a snapshot: each call reads the log as it is now, so two calls may see different moments.
 * Thread-safety: every method may be called from any thread, during appends and after close.
 */
public final class WalStatus {
    private final WalParts parts;

    WalStatus(WalParts parts) {
        this.parts = parts;
    }

    /** The random 64-bit identifier chosen when the log was created; every segment carries it. */
    public long logId() {
        return parts.logId;
    }

    /** What recovery found and did when this log was opened. */
    public RecoveryReport recoveryReport() {
        return parts.report;
    }

    public int segmentCount() {
        return parts.registry.size();
    }

    /** The live segment files, oldest first (a snapshot; truncation may remove some at any time). */
    public List<SegmentInfo> segments() {
        return parts.segments();
    }

    /** Bytes of log kept, from the oldest record to the insert position. */
    public long retainedBytes() {
        return parts.insert.get() - parts.oldestLsn();
    }

    /**
     * Bytes the log's segment files take in its directory: every segment at its full size (the one prepared ahead
     * among them), and spares kept for recycling; {@link #retainedBytes()} is the part records fill. Reads the
     * directory (a file system call per file: for admin paths, not hot ones); -1 when it cannot be read.
     */
    public long segmentFilesBytes() {
        try {
            return SegmentFiles.bytesOnDisk(parts.dir);
        } catch (IOException e) {
            return -1;
        }
    }

    /** True once a force failed; appends are refused until the log is reopened. */
    public boolean isFailed() {
        return parts.commit.failure() != null;
    }

    /** Why the log failed (the failed call and its error, e.g. the force's IOException), or null while it has not. */
    public String failureReason() {
        WalFailedException f = parts.commit.failure();
        return f == null ? null : f.getMessage();
    }

    /** Total forces since open. */
    public long flushCount() {
        return parts.commit.flushCount();
    }

    /** Why local appends are refused (this log is a replica), or null when they are accepted. */
    public String appendsRefusedReason() {
        return parts.replication.refusal();
    }

    /** The epoch this log's appends are written in now (PostgreSQL's timeline): 1 until a promotion. */
    public int epoch() {
        return parts.replication.history().current().number();
    }

    /** The epochs this log went through, oldest first (docs/format.md, "Epoch history file"). */
    public EpochHistory history() {
        return parts.replication.history();
    }

    /**
     * How long the oldest commit at a remote durability level has waited for the synchronous replicas, since its append
     * (zero when none waits). A policy whose replicas are gone shows here, long before any timeout.
     */
    public Duration oldestRemoteWait() {
        return Duration.ofNanos(parts.remote.oldestWaitNanos());
    }

    /**
     * While commits at remote levels have waited more than five seconds for the synchronous replicas: the warning the
     * log wrote then (once); null otherwise.
     */
    public String remoteWaitWarning() {
        return parts.remote.stuckWarning();
    }

    /** Retention's limits, what it removed and who holds back what it would remove (see {@link RetentionStatus}). */
    public RetentionStatus retention() {
        var r = parts.retention;
        return new RetentionStatus(r.maxAge(), r.maxBytes(), r.removedSegments(), r.holds().stream()
                .map(h -> new RetentionStatus.Held(h.holder().tag, h.bytes(), h.floorLsn(), h.since())).toList());
    }

    /** The archiver, when the log is archived ({@link WalConfig.Builder#archive}): its progress and status. */
    public Optional<ArchiverStatus> archiver() {
        return Optional.ofNullable(parts.archiver);
    }
}
