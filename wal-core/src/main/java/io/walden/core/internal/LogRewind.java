package io.walden.core.internal;

import io.walden.core.IllegalLsnException;
import io.walden.core.Lsn;
import io.walden.core.WalException;
import io.walden.core.internal.journal.LogJournal;
import io.walden.core.internal.commit.Appender;
import io.walden.core.internal.commit.GroupCommit;
import io.walden.core.internal.commit.Position;
import io.walden.core.internal.commit.ReadNotifier;
import io.walden.core.internal.cursor.CursorReplay;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.recovery.Checkpointer;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.segment.SegmentFiles;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;
import io.walden.core.internal.segment.SegmentPreparer;
import io.walden.core.internal.segment.SegmentRegistry;
import io.walden.core.internal.sync.SyncStrategy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A replica's rewind (docs/replication.md, "Shipping before the flush", step 4): removes, durably, the records past a
 * point its primary's history says it never had. The positions move back and a checkpoint at the point is written
 * (under the checkpointer's lock, so that no periodic checkpoint records the old flush point), then the bytes past it
 * are zeroed and forced and later segments cut back; the cursors and the archive markers forget what went with them.
 *
 * <p>Thread-safety: {@link #removeAfter} under the log's admin lock, with the caller inside the log's activity.
 */
final class LogRewind {
    private static final Logger LOG = LoggerFactory.getLogger(LogRewind.class);

    /** The rest of the log: its oldest record, and what it forgets after a rewind. */
    private final WalReplication.Log log;
    private final Path dir;
    private final long segmentSize;
    private final GroupCommit commit;
    private final Checkpointer checkpointer;
    private final Appender appender;
    private final SegmentPreparer preparer;
    private final SegmentRegistry registry;
    private final ReadNotifier notifier;
    private final CursorReplay cursors;
    private final Position insert;
    private final Position written;
    private final Position readLimit;
    /** How the log forces its files: a store journal's entries past the rewind point are discarded with the records. */
    private final SyncStrategy sync;

    LogRewind(WalReplication.Log log, Path dir, long segmentSize, GroupCommit commit, Checkpointer checkpointer,
              Appender appender, SegmentPreparer preparer, SegmentRegistry registry, ReadNotifier notifier,
              CursorReplay cursors, Position insert, Position written, Position readLimit, SyncStrategy sync) {
        this.log = log;
        this.dir = dir;
        this.segmentSize = segmentSize;
        this.commit = commit;
        this.checkpointer = checkpointer;
        this.appender = appender;
        this.preparer = preparer;
        this.registry = registry;
        this.notifier = notifier;
        this.cursors = cursors;
        this.insert = insert;
        this.written = written;
        this.readLimit = readLimit;
        this.sync = sync;
    }

    /** Removes the records from {@code lsn} on; returns how many bytes went (0: the log ends at or before it). */
    long removeAfter(long lsn) {
        long end = insert.get();
        if (lsn >= end) {
            return 0;
        }
        if (lsn < log.oldestLsn()) {
            throw new IllegalStateException("cannot rewind to " + Lsn.format(lsn) + ": below this log's oldest record "
                    + Lsn.format(log.oldestLsn()));
        }
        commit.flushAll(); // nothing unwritten in the ring: only the link ahead of the end
        long from = ReadStart.pastHeader(lsn, segmentSize);
        long expected;
        try {
            expected = ReadStart.expectedPrev(registry, from, written.get(), end, log.oldestLsn());
        } catch (IllegalLsnException e) {
            throw new IllegalStateException("cannot rewind to " + Lsn.format(from) + ": " + e.getMessage(), e);
        }
        // Entered: the segment may be a sealed one, parked (OpenSegments); entered, it stays mapped until the rewind is
        // done, and once it holds the log's end no sweep parks it again.
        Segment seg = registry.enter(from);
        if (seg == null) {
            throw new IllegalStateException("cannot rewind to " + Lsn.format(from) + ": its segment was removed");
        }
        try {
            return removeFrom(seg, from, end, expected);
        } finally {
            seg.exit();
        }
    }

    private long removeFrom(Segment seg, long from, long end, long expected) {
        long prev = seg.readLong(from - seg.startLsn() + RecordDescriptor.PREV_OFFSET);
        if (expected != ReadStart.ANY_PREV && expected != prev) {
            throw new IllegalStateException("cannot rewind to " + Lsn.format(from) + ": its record's link does not "
                    + "match the chain before it");
        }
        long firstPrev = from - seg.startLsn() == SegmentHeaderDescriptor.LENGTH ? prev
                : seg.readLong(SegmentHeaderDescriptor.LENGTH + RecordDescriptor.PREV_OFFSET);
        try {
            // The positions move back and the checkpoint is written under the checkpointer's lock: no periodic
            // checkpoint can record the old flush point in between.
            checkpointer.rewind(from, firstPrev, () -> {
                commit.rewindPositions(from, insert);
                readLimit.set(Math.min(readLimit.get(), from));
                appender.rewindLink(end, from, prev);
            });
            if (sync instanceof LogJournal journaled) {
                // After the checkpoint says the log ends here, before a byte is zeroed: the store journal's entries
                // must never write the removed records back. A crash before this leaves them to be written back past
                // the checkpoint's flush point (found again, and rewound again at the next connection, as without a
                // journal); a discard before that checkpoint could cut what the control file still calls flushed.
                journaled.discardFrom(from);
            }
            SegmentFiles.writeZeros(seg.channel(), from - seg.startLsn(), seg.size());
            seg.force(false);
            seg.boundaries().forgetFrom(from - seg.startLsn());
            preparer.cutBack(seg.startLsn());
        } catch (IOException e) {
            // The checkpoint or the removal failed: the files may hold the old records below an old flush point
            // while the positions say otherwise. The log must be reopened (recovery then finds the old records,
            // written back by its store's journal if it has one and the discard was not made yet, and the next
            // connection to the primary rewinds again).
            commit.fail("rewinding to " + Lsn.format(from) + " failed: " + e, e);
            throw new WalException("could not remove the records after " + Lsn.format(from) + " from " + dir
                    + ": " + e.getMessage() + "; reopen the log (the next rewind removes them)", e);
        }
        preparer.request(seg.startLsn() + segmentSize);
        notifier.signal();
        LOG.warn("Rewound the log in {} from {} to {}: the records after it were never its primary's", dir,
                Lsn.format(end), Lsn.format(from));
        try {
            cursors.rewound(from); // cursor changes removed with the records are undone
        } catch (IOException e) {
            throw new WalException("rewound to " + Lsn.format(from) + " but could not rebuild the cursors: "
                    + e.getMessage() + "; reopen the log", e);
        } finally {
            log.rewound(from); // whatever the cursors did: the archive markers from here on no longer hold
        }
        return end - from;
    }
}
