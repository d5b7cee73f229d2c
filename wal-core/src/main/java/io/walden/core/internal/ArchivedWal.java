package io.walden.core.internal;

import io.walden.core.EpochHistory;
import io.walden.core.SegmentInfo;
import io.walden.core.internal.archive.ArchivedLog;

import java.nio.file.Path;
import java.util.List;

/**
 * The view of a log its {@link io.walden.core.internal.archive.Archiver} gets: what it reads, and the one switch it holds.
 * Built from the log's parts, so the archiver can be made while the log is being put together.
 */
public final class ArchivedWal implements ArchivedLog {
    private final WalParts parts;

    public ArchivedWal(WalParts parts) {
        this.parts = parts;
    }

    @Override
    public Path directory() {
        return parts.dir;
    }

    @Override
    public long segmentSize() {
        return parts.config.segmentSize();
    }

    @Override
    public List<SegmentInfo> segments() {
        return parts.segments();
    }

    @Override
    public long flushedLsn() {
        return parts.flushed.get();
    }

    /**
     * A primary's log. A replica's is known before its receiver refuses appends: its read limit, kept in the control
     * file, is set (so a restarted replica never archives, not even before it starts following).
     */
    @Override
    public boolean acceptsAppends() {
        return parts.archiveFloor.ownArchive();
    }

    @Override
    public long archivedUpstream() {
        return parts.archiveFloor.upstream();
    }

    @Override
    public EpochHistory history() {
        return parts.replication.history();
    }

    @Override
    public void blockAppends(String reason) {
        parts.writes.blockAppends(reason);
    }
}
