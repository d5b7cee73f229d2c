package io.walden.core.internal;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.walden.core.EpochHistory;
import io.walden.core.RecoveryReport;
import io.walden.core.SegmentInfo;
import io.walden.core.WalFailedException;
import io.walden.core.internal.archive.Archiver;
import io.walden.core.internal.commit.FlushObserver;
import io.walden.core.internal.commit.GroupCommit;
import io.walden.core.internal.commit.RemoteWaits;
import io.walden.core.internal.metrics.WalMetrics;
import io.walden.core.internal.retention.Retention;
import io.walden.core.internal.segment.SegmentPreparer;

import java.nio.file.Path;
import java.util.List;

/**
 * What an operator reads about a log, from its parts: its meters ({@link WalMetrics.Sources}) and its status
 * ({@code WalStatus}, which reads the same things), so that neither the metrics package nor the status needs the
 * {@link Wal} facade or the parts behind it.
 *
 * <p>Thread-safety: every method from any thread (each part it reads is); a live view, not a snapshot.
 */
public final class StatusSources implements WalMetrics.Sources {
    private final long logId;
    private final RecoveryReport report;
    private final Path dir;
    /** The log's name in its meters' {@code log} tag (its own, its cursors'): {@link io.walden.core.WalConfig#name()}. */
    private final String name;
    private final LogPositions positions;
    /** Whether the log is closed. */
    private final WritePath writes;
    /** Whether the log failed, and its flushes. */
    private final GroupCommit commit;
    /** The commits that wait for the synchronous replicas. */
    private final RemoteWaits remote;
    /** The role (why appends are refused) and the epoch history. */
    private final WalReplication replication;
    private final Retention retention;
    /** Null when the log is not archived. */
    private final Archiver archiver;
    /** What the preparer recycled. */
    private final SegmentPreparer preparer;

    StatusSources(long logId, RecoveryReport report, Path dir, String name, LogPositions positions, WritePath writes, GroupCommit commit,
                  RemoteWaits remote, WalReplication replication, Retention retention, Archiver archiver,
                  SegmentPreparer preparer) {
        this.logId = logId;
        this.report = report;
        this.dir = dir;
        this.name = name;
        this.positions = positions;
        this.writes = writes;
        this.commit = commit;
        this.remote = remote;
        this.replication = replication;
        this.retention = retention;
        this.archiver = archiver;
        this.preparer = preparer;
    }

    // ------------------------------------------------------------------ the meters (WalMetrics.Sources)

    @Override
    public String logName() {
        return name;
    }

    @Override
    public long insertLsn() {
        return positions.insertLsn();
    }

    @Override
    public long writtenLsn() {
        return positions.writtenLsn();
    }

    @Override
    public long flushedLsn() {
        return positions.flushedLsn();
    }

    @Override
    public long oldestLsn() {
        return positions.oldestLsn();
    }

    @Override
    public boolean isClosed() {
        return writes.isClosed();
    }

    @Override
    public boolean isFailed() {
        return commit.failure() != null;
    }

    @Override
    public int segmentCount() {
        return positions.segmentCount();
    }

    @Override
    public long retainedBytes() {
        return positions.retainedBytes();
    }

    @Override
    public long oldestRemoteWaitNanos() {
        return remote.oldestWaitNanos();
    }

    @Override
    public void bindParts(MeterRegistry meters, Tags tags) {
        retention.bindTo(meters, tags);
        if (archiver != null) {
            archiver.bindTo(meters, tags);
        }
    }

    @Override
    public long flushCount() {
        return commit.flushCount();
    }

    @Override
    public long recycledSegments() {
        return preparer.recycledCount();
    }

    @Override
    public void flushObserver(FlushObserver observer) {
        commit.observer(observer);
    }

    // ------------------------------------------------------------------ the status (WalStatus) besides

    /** The random 64-bit identifier chosen when the log was created. */
    public long logId() {
        return logId;
    }

    public RecoveryReport recoveryReport() {
        return report;
    }

    /** The log's directory (absolute). */
    public Path directory() {
        return dir;
    }

    public List<SegmentInfo> segments() {
        return positions.segments();
    }

    /** Why the log failed, or null while it has not. */
    public WalFailedException failure() {
        return commit.failure();
    }

    /** Why local appends are refused (a replica), or null when they are accepted. */
    public String appendsRefusedReason() {
        return replication.refusal();
    }

    public EpochHistory history() {
        return replication.history();
    }

    /** The warning said while commits at remote levels waited long for the synchronous replicas, or null. */
    public String remoteWaitWarning() {
        return remote.stuckWarning();
    }

    public Retention retention() {
        return retention;
    }

    /** Null when the log is not archived. */
    public Archiver archiver() {
        return archiver;
    }
}
