package io.walden.core.internal;

import io.walden.core.IllegalLsnException;
import io.walden.core.Lsn;
import io.walden.core.LsnRemovedException;
import io.walden.core.internal.segment.RecordBoundaries;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;
import io.walden.core.internal.segment.SegmentRegistry;

/**
 * Proves that a read starts at a record boundary, and tells the prev link its first record must carry. A start LSN
 * comes from outside (an HTTP client, a replica's hello, an application's saved position): trusting it would let a
 * reader started inside a payload return a record forged there, CRC and all, under a made-up LSN. A start is proven
 * by the segment's chain of records ({@link RecordBoundaries}), or is the segment's first record, or the insert
 * position (where the next record will be).
 *
 * <p>Thread-safety: stateless.
 */
public final class ReadStart {
    /** The first record read may carry any link below it: a segment's first record, or the insert position. */
    public static final long ANY_PREV = -1;
    /** At or beyond the written position when asked: to be proven once the records before it are written. */
    public static final long UNPROVEN = -2;

    private ReadStart() {
    }

    /**
     * @param lsn     a start LSN inside a live segment, after its header (callers map a segment's start past it)
     * @param written the written position: records below it are published, so their chain can be walked
     * @param insert  the insert position
     * @return the prev link the record at {@code lsn} must carry, {@link #ANY_PREV}, or {@link #UNPROVEN}
     * @throws IllegalLsnException when no record starts at {@code lsn}
     * @throws LsnRemovedException when {@code lsn}'s segment was truncated away meanwhile
     */
    public static long expectedPrev(SegmentRegistry registry, long lsn, long written, long insert, long oldest) {
        if (lsn == insert) {
            return ANY_PREV;
        }
        if (lsn >= written) {
            return UNPROVEN;
        }
        Segment seg = registry.enter(lsn);
        if (seg == null) {
            throw new LsnRemovedException(lsn, oldest);
        }
        try {
            long offset = lsn - seg.startLsn();
            long limit = Math.min(written, seg.endLsn()) - seg.startLsn();
            long prev = seg.boundaries().previous(offset, limit);
            if (prev == RecordBoundaries.FIRST) {
                return ANY_PREV;
            }
            if (prev < 0) {
                throw new IllegalLsnException("no record starts at " + Lsn.format(lsn) + ": it is not a record boundary of "
                        + "this log; start at an LSN returned by an append, a record's next LSN, or the oldest LSN");
            }
            return seg.startLsn() + prev;
        } finally {
            seg.exit();
        }
    }

    /** A segment's start stands for its first record, which follows the header. */
    public static long pastHeader(long lsn, long segmentSize) {
        return (lsn & (segmentSize - 1)) == 0 ? lsn + SegmentHeaderDescriptor.LENGTH : lsn;
    }
}
