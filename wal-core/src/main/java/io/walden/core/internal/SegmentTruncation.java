package io.walden.core.internal;

import io.walden.core.WalException;
import io.walden.core.internal.commit.Position;
import io.walden.core.internal.cursor.CursorBook;
import io.walden.core.internal.recovery.Checkpointer;
import io.walden.core.internal.retention.Retention;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.segment.SegmentFiles;
import io.walden.core.internal.segment.SegmentPreparer;
import io.walden.core.internal.segment.SegmentRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Removes a log's oldest segments: retention's removal and {@code Wal.truncateBefore}. It keeps whatever a holder
 * (a replication slot, a cursor, the archive) still needs, what is not flushed, and what a replica's primary may still
 * rewind it to; each removed segment is renamed out of the log at once and its mapping released after a grace period.
 *
 * <p>Thread-safety: one truncation at a time, under the log's admin lock.
 */
final class SegmentTruncation {
    private static final Logger LOG = LoggerFactory.getLogger(SegmentTruncation.class);

    private final Object adminLock;
    private final WritePath writes;
    private final WalReplication replication;
    private final CursorBook cursors;
    private final ArchiveFloor archiveFloor;
    private final Checkpointer checkpointer;
    private final Position flushed;
    private final Position readLimit;
    private final SegmentRegistry registry;
    private final SegmentPreparer preparer;
    private final Path dir;

    SegmentTruncation(Object adminLock, WritePath writes, WalReplication replication, CursorBook cursors,
                      ArchiveFloor archiveFloor, Checkpointer checkpointer, Position flushed, Position readLimit,
                      SegmentRegistry registry, SegmentPreparer preparer, Path dir) {
        this.adminLock = adminLock;
        this.writes = writes;
        this.replication = replication;
        this.cursors = cursors;
        this.archiveFloor = archiveFloor;
        this.checkpointer = checkpointer;
        this.flushed = flushed;
        this.readLimit = readLimit;
        this.registry = registry;
        this.preparer = preparer;
        this.dir = dir;
    }

    /**
     * Truncation, under the admin lock: the holders' floors are read once, {@code decide} answers where to truncate
     * given them, and the removal keeps what those same floors need (retention's report and removal agree).
     */
    void truncate(Retention.Decision decide) {
        synchronized (adminLock) {
            writes.ensureOpen();
            Retention.Floors floors = new Retention.Floors(replication.retentionFloor(), cursors.retention.floor(),
                    archiveFloor.forTruncation());
            long lsn = decide.truncateBefore(floors);
            if (lsn == Retention.NOTHING) {
                return;
            }
            try {
                checkpointer.write(true);
            } catch (IOException e) {
                throw new WalException("could not write a checkpoint before truncating: " + e.getMessage(), e);
            }
            // Never past what is flushed; never past a replica's read limit, since a rewind by its own primary goes
            // back no further and must find the segment it ends in (a rewind below it, after a failover to a replica
            // that lagged, may find that segment removed: the replica then fetches from the archive or is rebuilt);
            // never what a slot, a cursor or the archive (the group's, on a replica) still needs.
            long keep = Math.min(Math.min(lsn, flushed.get()), readLimit.get());
            keep = Math.min(keep, floors.min());
            long limit = Math.min(registry.segmentStart(keep), checkpointer.durableScanStart());
            Segment oldestSegment = registry.oldest();
            if (oldestSegment != null && oldestSegment.endLsn() <= limit) {
                try {
                    cursors.retention.beforeTruncation(limit); // the control records about to go: into the base cursor file
                } catch (IOException e) {
                    throw new WalException("could not write the cursor file before truncating: " + e.getMessage(), e);
                }
            }
            for (Segment s : registry.snapshot()) {
                if (s.endLsn() > limit) {
                    break;
                }
                Path removedFile = dir.resolve(s.path().getFileName() + SegmentFiles.REMOVED_SUFFIX);
                Segment gone;
                try {
                    // Out of the log at once (a crash from here on never brings it back); the mapping stays
                    // valid for whoever still reads it, and is released after the grace period. The removed one
                    // is s, or its mapping again when a reader entered it after it was parked.
                    gone = registry.renameAndRemove(s, dir, removedFile);
                } catch (IOException e) {
                    throw new WalException("could not remove segment " + s.path() + ": " + e.getMessage(), e);
                }
                preparer.dispose(gone != null ? gone : s, removedFile);
                LOG.debug("Truncated segment {}", s.path().getFileName());
            }
            cursors.retention.afterTruncation();
        }
    }
}
