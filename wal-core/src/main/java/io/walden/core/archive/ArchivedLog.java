package io.walden.core.archive;

import io.walden.core.EpochHistory;
import io.walden.core.SegmentInfo;

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
     * The log's epoch history: archived objects are named by epoch, and after a promotion the segments from the current
     * epoch's start on differ from what the old primary archived.
     */
    EpochHistory history();

    /** Refuses local appends with {@link io.walden.core.AppendsBlockedException}{@code (reason)}, or accepts them again (null). */
    void blockAppends(String reason);
}
