package io.walden.core.internal.commit;

import io.walden.core.Lsn;
import io.walden.core.internal.metrics.WalStats;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.segment.SegmentLinks;
import io.walden.core.internal.segment.SegmentPreparer;


/**
 * A segment roll: what the appender whose reservation CAS moved the tail past a segment's end does before
 * {@link Reservations#reserve} returns the new segment's first LSN. It closes the old segment with a padding record,
 * notes the new segment's first prev link, keeps one segment prepared ahead, and admits and links the record it
 * reserved.
 *
 * <p>Guarantees: both records of a roll (the closing record and the first record of the new segment) are always
 * completed, even when the bookkeeping throws (the error is rethrown after); unless it throws, the new segment's first
 * prev link is in the {@link SegmentLinks} before the closing record is published, so before anyone can read past
 * the old segment; when completing the records fails, the log fails, since nothing could be published past this
 * point any more.
 *
 * <p>Once per segment, off the per-record path: it reaches back into {@link Reservations} for admission and into
 * the {@link Appender} for publication rather than keeping a copy of them.
 *
 * <p>Thread-safety: from any number of appending threads; each roll is run by the one appender whose CAS crossed
 * that segment's end, and rolls of different segments are independent. {@link #bind} once, before use.
 */
public final class SegmentRoll {
    private static final int HEADER = RecordDescriptor.HEADER_LENGTH;

    private final Appender appender;
    private final Reservations reservations;
    private final WalBuffers ring;
    private final SegmentPreparer preparer;
    private final SegmentLinks links;
    private final WalStats stats;
    private final long segmentSize;
    /** Fails the log when a roll cannot complete. Set once, before use. */
    private LogFailure failure;

    public SegmentRoll(Appender appender, Reservations reservations, WalBuffers ring, SegmentPreparer preparer,
                SegmentLinks links, WalStats stats, long segmentSize) {
        this.appender = appender;
        this.reservations = reservations;
        this.ring = ring;
        this.preparer = preparer;
        this.links = links;
        this.stats = stats;
        this.segmentSize = segmentSize;
    }

    public void bind(LogFailure failure) {
        this.failure = failure;
    }

    /**
     * Closes the segment ending at {@code segmentEnd} with a padding record at {@code t} and admits the record
     * reserved at {@code firstLsn}, the new segment's first. The closing record is published before the first record
     * is admitted: the two together may need more room than the ring has, and the first needs room that only the
     * closing record's publication lets the writer free. (A closing record itself is shorter than the record that did
     * not fit plus a header, so it always fits the ring.)
     *
     * <p>If the bookkeeping throws (an Error), both records are still completed, the first as padding, and the error
     * is rethrown: a reservation nobody fills would hold the published position below it for good. If completing
     * them throws, the log cannot move past this point: it fails.
     */
    public void roll(long t, long segmentEnd, long firstLsn, long aligned) {
        reservations.awaitRoom(segmentEnd);
        Throwable bookkeeping = null;
        try {
            links.begins(segmentEnd, t);
            stats.onRoll();
            preparer.request(segmentEnd + segmentSize); // keep one segment ready ahead of the tail
        } catch (Throwable e) {
            bookkeeping = e;
        }
        try {
            appender.writeHeaderFields(t, 0);
            appender.publish(t, (int) (segmentEnd - t), RecordDescriptor.FLAG_PADDING, null);
            reservations.awaitRoom(firstLsn + aligned + HEADER);
            ring.noteSpill(firstLsn, firstLsn + aligned);
            ring.writeLongRelease(ring.offset(firstLsn) + RecordDescriptor.PREV_OFFSET, t);
            reservations.linkSuccessor(firstLsn + aligned, firstLsn);
            if (bookkeeping != null) {
                appender.writeHeaderFields(firstLsn, 0);
                appender.publish(firstLsn, (int) aligned, RecordDescriptor.FLAG_PADDING, null);
            }
        } catch (Throwable e) {
            failure.fail("a segment roll at " + Lsn.format(segmentEnd) + " could not complete: " + e, e);
            throw e;
        }
        if (bookkeeping instanceof RuntimeException) {
            throw (RuntimeException) bookkeeping;
        }
        if (bookkeeping instanceof Error) {
            throw (Error) bookkeeping;
        }
        if (bookkeeping != null) {
            throw new IllegalStateException(bookkeeping);
        }
    }
}
