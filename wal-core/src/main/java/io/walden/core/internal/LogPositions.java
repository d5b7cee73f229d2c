package io.walden.core.internal;

import io.walden.core.SegmentInfo;
import io.walden.core.WalReader;
import io.walden.core.internal.commit.Position;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;
import io.walden.core.internal.segment.SegmentRegistry;

import java.util.ArrayList;
import java.util.List;

/**
 * Where a log begins and ends, read-only: its oldest record kept, its insert, written and flushed positions, a
 * replica's read limit, and its live segments. What the parts that only look at the log's extent are given (the
 * status, the meters, the cursors, retention, readers), instead of the positions the write path moves.
 *
 * <p>Thread-safety: every method from any thread; each reads the positions as they are now (two calls may see
 * different moments).
 */
public final class LogPositions {
    private final SegmentRegistry registry;
    private final Position insert;
    private final Position written;
    private final Position flushed;
    private final Position readLimit;

    LogPositions(SegmentRegistry registry, Position insert, Position written, Position flushed, Position readLimit) {
        this.registry = registry;
        this.insert = insert;
        this.written = written;
        this.flushed = flushed;
        this.readLimit = readLimit;
    }

    /** Where the next record will be reserved. */
    public long insertLsn() {
        return insert.get();
    }

    /** Every record below this is complete in the segment files. */
    public long writtenLsn() {
        return written.get();
    }

    /** Every record below this is forced to stable storage. */
    public long flushedLsn() {
        return flushed.get();
    }

    /**
     * A replica's read limit: its primary had flushed everything below it, and readers see nothing at or beyond it;
     * {@code Long.MAX_VALUE} for a primary's log.
     */
    public long readLimit() {
        return readLimit.get();
    }

    /**
     * What readers at {@code visibility} may see now: below the written or flushed position, and, on a replica, below
     * what its primary has flushed (the read limit).
     */
    public long visibleLsn(WalReader.Visibility visibility) {
        long end = visibility == WalReader.Visibility.WRITTEN ? written.get() : flushed.get();
        return Math.min(end, readLimit.get());
    }

    /** The first record still kept: right after the oldest segment's header (the insert position when none is left). */
    public long oldestLsn() {
        Segment s = registry.oldest();
        return s == null ? insert.get() : s.startLsn() + SegmentHeaderDescriptor.LENGTH;
    }

    /** Bytes of log kept, from the oldest record to the insert position. */
    public long retainedBytes() {
        return insert.get() - oldestLsn();
    }

    /** How many segments the log holds (the one prepared ahead among them). */
    public int segmentCount() {
        return registry.size();
    }

    /** The live segment files, oldest first (a snapshot; truncation may remove some at any time). */
    public List<SegmentInfo> segments() {
        List<SegmentInfo> out = new ArrayList<>();
        for (Segment s : registry.snapshot()) {
            out.add(new SegmentInfo(s.startLsn(), s.endLsn(), s.path()));
        }
        return out;
    }
}
