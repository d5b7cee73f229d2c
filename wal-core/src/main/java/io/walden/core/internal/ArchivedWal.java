package io.walden.core.internal;

import io.walden.core.EpochHistory;
import io.walden.core.SegmentInfo;
import io.walden.core.internal.archive.ArchivedLog;

import java.nio.file.Path;
import java.util.List;

/**
 * The view of a log its {@link io.walden.core.internal.archive.Archiver} gets: what it reads, and the one switch it holds.
 * Made from the log's parts once every one of them is (the archiver is the last).
 */
public final class ArchivedWal implements ArchivedLog {
    private final Path dir;
    private final long segmentSize;
    private final LogPositions positions;
    private final ArchiveFloor archiveFloor;
    /** The epoch history, which the archive keeps a copy of. */
    private final WalReplication replication;
    /** Where the one switch is: appends blocked while the archive falls too far behind. */
    private final WritePath writes;

    ArchivedWal(Path dir, long segmentSize, LogPositions positions, ArchiveFloor archiveFloor, WalReplication replication,
                WritePath writes) {
        this.dir = dir;
        this.segmentSize = segmentSize;
        this.positions = positions;
        this.archiveFloor = archiveFloor;
        this.replication = replication;
        this.writes = writes;
    }

    @Override
    public Path directory() {
        return dir;
    }

    @Override
    public long segmentSize() {
        return segmentSize;
    }

    @Override
    public List<SegmentInfo> segments() {
        return positions.segments();
    }

    @Override
    public long flushedLsn() {
        return positions.flushedLsn();
    }

    /**
     * A primary's log. A replica's is known before its receiver refuses appends: its read limit, kept in the control
     * file, is set (so a restarted replica never archives, not even before it starts following).
     */
    @Override
    public boolean acceptsAppends() {
        return archiveFloor.ownArchive();
    }

    @Override
    public long archivedUpstream() {
        return archiveFloor.upstream();
    }

    @Override
    public EpochHistory history() {
        return replication.history();
    }

    @Override
    public void blockAppends(String reason) {
        writes.blockAppends(reason);
    }
}
