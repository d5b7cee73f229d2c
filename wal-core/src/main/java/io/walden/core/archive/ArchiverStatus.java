package io.walden.core.archive;

import java.time.Duration;

/**
 * How a log's archiving goes ({@link io.walden.core.WalStatus#archiver()}, the {@code archive} object of the status
 * report): a log configured with {@link io.walden.core.WalConfig.Builder#archive} archives each sealed segment to its
 * {@link ArchiveTarget} once, verified, before the log may remove it (PostgreSQL's archiver with
 * {@code archive_status}). The guarantees are argued in docs/operations.md ("Backup and restore"):
 * <ul>
 *   <li>A segment is archived only once every byte of it is flushed and a later segment has begun (it is sealed), and
 *       counted as archived only after the store verified it and its marker is durable. A crash at any point uploads
 *       it again; nothing is skipped.</li>
 *   <li>Truncation (and so recycling) is held back at the oldest segment not archived.</li>
 *   <li>The current segment's flushed head is uploaded as {@code <epoch><segment>.wal.partial} once it has waited
 *       {@link ArchiveConfig#timeout()}, so a quiet log still reaches the archive; the sealed upload replaces it.</li>
 *   <li>When more than {@link ArchiveConfig#maxPendingBytes()} flushed bytes are not archived, appends are refused
 *       ({@code BLOCK}, {@link #blocking()}) or the oldest pending segments are given up ({@code DROP_ARCHIVE},
 *       {@link #droppedSegments()}); checked every 100 ms, so the cap can be passed by what is appended meanwhile.</li>
 *   <li>A replica's log is not archived (its primary archives), but it keeps every segment the group's archive does not
 *       hold yet, as its primary reports, so that, promoted, it still has them to upload. After a promotion the epoch's
 *       history goes up first, then the segments from the new epoch's start, named by the new epoch beside the old
 *       primary's objects ({@link ArchiveNames}).</li>
 * </ul>
 *
 * <p>Thread-safety: every method may be called from any thread; the values are each read at once, not as one snapshot.
 */
public interface ArchiverStatus {

    /** The archive, as the user named it. */
    String target();

    /**
     * Every record below this LSN is in the archive (in a sealed segment's object or a partial one), or in a segment
     * given up under {@link ArchiveConfig.WhenFull#DROP_ARCHIVE} ({@link #droppedSegments()}).
     */
    long archivedLsn();

    /** Flushed bytes not archived yet. */
    long lagBytes();

    /** Sealed segments waiting for their upload. */
    int pendingSegments();

    /** The last failure, or null once an upload succeeded after it. */
    String lastError();

    /**
     * The records, below the log's oldest, that the archive lacks and the log no longer holds (found when a replica
     * became primary), or null: {@link #archivedLsn()} stays below them, since a restore stops there.
     */
    Missing missing();

    /** Segments archived since the log was opened. */
    long archivedSegments();

    /** Uploads that failed since the log was opened (each is tried again). */
    long failures();

    /** Segments given up under {@link ArchiveConfig.WhenFull#DROP_ARCHIVE} since the log was opened. */
    long droppedSegments();

    /** True while appends are refused because the archive is too far behind. */
    boolean blocking();

    /** Waits until every record below {@code lsn} is archived; false on timeout. */
    boolean awaitArchived(long lsn, Duration timeout) throws InterruptedException;

    /** Records from {@code fromLsn} to {@code toLsn} are in neither the archive nor the log (see {@link #missing()}). */
    record Missing(long fromLsn, long toLsn) {
    }
}
