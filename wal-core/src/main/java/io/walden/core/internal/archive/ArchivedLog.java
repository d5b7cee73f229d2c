package io.walden.core.internal.archive;

import io.walden.core.EpochHistory;
import io.walden.core.SegmentInfo;
import io.walden.core.archive.ArchiveConfig;

import java.nio.file.Path;
import java.util.List;

/**
 * What an {@link Archiver} needs of the log it archives: a narrow view, so the archiver never reaches into
 * {@link io.walden.core.Wal} (which implements it privately).
 *
 * <p>Thread-safety: every method may be called from the archiver's thread while the log runs.
 */
public interface ArchivedLog {
    Path directory();

    long segmentSize();

    /** The live segments, oldest first (a snapshot). */
    List<SegmentInfo> segments();

    /** Every byte below it is forced to stable storage. */
    long flushedLsn();

    /** True when this log takes local appends (a primary); a replica's log is not archived (PostgreSQL's archive_mode=on). */
    boolean acceptsAppends();

    /**
     * For a log that refuses appends (a replica, or a group member that is not the primary): every segment that begins
     * below this LSN is in the group's archive, or was given up by its primary under
     * {@link ArchiveConfig.WhenFull#DROP_ARCHIVE}, as the primary last said over the replication stream
     * (docs/replication-protocol.md, "Archived"); 0 until it said; {@code Long.MAX_VALUE} when the primary keeps no
     * archive. Such a log keeps every later segment, since once promoted it is the one to upload what the archive lacks.
     */
    long archivedUpstream();

    /**
     * The log's epoch history: archived objects are named by epoch, and after a promotion the segments from the current
     * epoch's start on differ from what the old primary archived.
     */
    EpochHistory history();

    /** Refuses local appends with {@link io.walden.core.AppendsBlockedException}{@code (reason)}, or accepts them again (null). */
    void blockAppends(String reason);
}
