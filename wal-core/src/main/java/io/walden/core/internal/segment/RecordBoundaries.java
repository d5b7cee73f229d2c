package io.walden.core.internal.segment;

import io.walden.core.internal.record.RecordCursor;
import io.walden.core.internal.record.RecordDescriptor;

import java.nio.ByteBuffer;

/**
 * Which offsets of one segment are record boundaries, proven by walking the chain of length words from the
 * segment's first record (which follows the segment header, so it is a boundary by construction). Nothing else
 * can prove it: a payload may hold bytes that look like a whole record, with a valid CRC-32C and a plausible prev
 * link, and a reader started inside it would return that forged record under a made-up LSN.
 *
 * <p>The walk is done once per segment and remembered sparsely: for every 4 KiB page, the last boundary before the
 * page starts. Checking an offset then walks at most one page plus one record. The index is built lazily, on the
 * first check of an offset in the segment, and only over published records ({@code limit}: the written position),
 * so it never reads a length word that is still being written. Length words below the written position are final
 * (a record is published once and never changes), so what the walk found stays true.
 *
 * <p>Cost: 4 bytes of index per 4 KiB of segment (64 KiB for a 64 MiB segment), allocated on the first check.
 * Only readers and senders check, never the append path.
 *
 * <p>Thread-safety: every method may be called from any thread (synchronized: checks are rare, the walk is short).
 */
public final class RecordBoundaries {
    /** {@link #previous}: the offset is the segment's first record (its predecessor is in the previous segment). */
    public static final long FIRST = -1;
    /** {@link #previous}: no record starts at the offset. */
    public static final long NOT_A_BOUNDARY = -2;
    /** {@link #previous}: the offset is at or beyond the limit: nothing can be said yet. */
    public static final long NOT_YET_WRITTEN = -3;

    private static final int PAGE_SHIFT = 12;
    private static final int FIRST_RECORD = SegmentHeaderDescriptor.LENGTH;

    private final Segment segment;
    /** For page p >= 1 walked so far: the greatest boundary below {@code p << PAGE_SHIFT}. Allocated on first use. */
    private int[] lastBoundaryBefore;
    /** A boundary: every boundary below it has been walked. */
    private long walkedTo = FIRST_RECORD;
    /** Over a view of the segment, made with the index. */
    private final RecordCursor cursor = new RecordCursor();
    private ByteBuffer view;

    public RecordBoundaries(Segment segment) {
        this.segment = segment;
    }

    /**
     * Whether a record starts at {@code offset}, and if so where the record before it starts.
     *
     * @param limit the offset up to which records are published (the written position within this segment, or
     *              the segment's size when it is written whole)
     * @return the offset of the preceding record in this segment; {@link #FIRST} for the segment's first record;
     *         {@link #NOT_A_BOUNDARY}; or {@link #NOT_YET_WRITTEN} when {@code offset >= limit}
     */
    public synchronized long previous(long offset, long limit) {
        if (offset == FIRST_RECORD) {
            return FIRST;
        }
        if (offset < FIRST_RECORD || offset >= segment.size() || (offset & (RecordDescriptor.ALIGNMENT - 1)) != 0) {
            return NOT_A_BOUNDARY;
        }
        if (offset >= limit) {
            return NOT_YET_WRITTEN;
        }
        walk(Math.min(limit, segment.size()));
        if (offset >= walkedTo) {
            // The walk stopped early (an unpublished or damaged length word below the limit): nothing is proven.
            return walkedTo < limit ? NOT_A_BOUNDARY : NOT_YET_WRITTEN;
        }
        int page = (int) (offset >>> PAGE_SHIFT);
        long prev = -1;
        long at = page == 0 ? FIRST_RECORD : lastBoundaryBefore[page];
        while (at < offset) {
            prev = at;
            at = cursor.at(at).nextPublished(); // below walkedTo: a record, walked before
            if (at < 0) {
                return NOT_A_BOUNDARY; // cannot happen below walkedTo; never loop on it
            }
        }
        return at == offset ? prev : NOT_A_BOUNDARY;
    }

    /**
     * For seeking by time (TimeIndex): a record boundary below which every timed record is older than {@code micros},
     * as close below the first record at or after it as the page index allows (at most a page or two away, when the
     * walk reached there). Found by a binary search over the pages walked, by the time of the first timed record at or
     * after each page's last boundary: times never decrease in LSN order.
     *
     * @param limit as for {@link #previous}
     */
    public synchronized long lastBoundaryBeforeTime(long micros, long limit) {
        walk(Math.min(limit, segment.size()));
        int lo = 1; // pages whose last boundary is below the walk's end: 1 .. (walkedTo - 1) >>> PAGE_SHIFT
        int hi = (int) ((walkedTo - 1) >>> PAGE_SHIFT);
        long best = FIRST_RECORD;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            long boundary = lastBoundaryBefore[mid];
            long timed = RecordCursor.firstTimed(view, boundary, walkedTo, Long.MIN_VALUE);
            if (timed >= 0 && view.getLong((int) timed + RecordDescriptor.TIME_OFFSET) < micros) {
                best = Math.max(best, boundary);
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return best;
    }

    /**
     * The log was rewound to {@code offset}, a proven boundary of this segment: what the walk found beyond it no
     * longer holds (new records will be written there). Length words below it are unchanged.
     */
    public synchronized void forgetFrom(long offset) {
        if (walkedTo > offset) {
            walkedTo = Math.max(FIRST_RECORD, offset);
        }
    }

    /** Extends the walk over the published records below {@code limit}. */
    private void walk(long limit) {
        if (lastBoundaryBefore == null) {
            lastBoundaryBefore = new int[(int) (segment.size() >>> PAGE_SHIFT) + 1];
            view = segment.newView();
            cursor.start(view, segment.startLsn(), FIRST_RECORD, -1);
        }
        while (walkedTo < limit) {
            long next = cursor.at(walkedTo).nextPublished();
            if (next < 0) {
                return; // not published (or damaged): stop; a later check continues from here
            }
            // Every page starting in (walkedTo, next] has walkedTo as its last boundary before it.
            for (long p = (walkedTo >>> PAGE_SHIFT) + 1; p <= (next >>> PAGE_SHIFT) && p < lastBoundaryBefore.length; p++) {
                lastBoundaryBefore[(int) p] = (int) walkedTo;
            }
            walkedTo = next;
        }
    }
}
