package io.walden.core.internal.commit;

import io.walden.core.IllegalLsnException;
import io.walden.core.Lsn;
import io.walden.core.WalCorruptedException;
import io.walden.core.WalException;
import io.walden.core.internal.metrics.WalStats;
import io.walden.core.internal.record.RecordCheck;
import io.walden.core.internal.record.RecordCursor;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;
import io.walden.core.internal.segment.SegmentLinks;
import io.walden.core.internal.segment.SegmentPreparer;
import io.walden.core.internal.segment.SegmentRegistry;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A replica's write stage: log bytes received from a primary go into the segment files verbatim, past the WAL
 * buffers, and the positions move over them only once every record in them is proven (docs/replication-protocol.md,
 * Data frames). Also the other half of a replica's rewind: the prev link written ahead moves back with the end.
 *
 * <p>Guarantees: no position ever moves over a byte that fails a check (length and fit rule, flags, the exact prev
 * link chain, CRC-32C), and refused bytes are zeroed again; the prev link written ahead at the new end is the one the
 * primary's next record carries, so local appends after a promotion continue the chain; the ring keeps no byte below
 * the written position ({@link WalBuffers}' invariant).
 *
 * <p>Thread-safety: one caller at a time (the replica's receiver, or a rewind, both under the log's admin lock), and no
 * local appends meanwhile; the record cursor and segment view reused here rely on that.
 */
public final class ReplicatedAppends {
    private static final int SEGMENT_HEADER = SegmentHeaderDescriptor.LENGTH;

    private final RecordClock clock;
    private final Reservations reservations;
    private final SegmentRegistry registry;
    private final SegmentPreparer preparer;
    private final WalBuffers ring;
    private final Position insert;
    private final Position published;
    private final Position written;
    private final ReadNotifier notifier;
    private final SegmentLinks links;
    private final WalStats stats;
    private final long segmentSize;
    /** The first record after open, and its prev link ({@link Appender}'s bootstrap: -1 when unknown). */
    private final long bootstrapLsn;
    private final long bootstrapPrev;
    /** One walk at a time (a single caller): reused so that checking a batch allocates nothing. */
    private final RecordCursor cursor = new RecordCursor();
    private Segment segment;
    private ByteBuffer segmentView;

    public ReplicatedAppends(Reservations reservations, SegmentRegistry registry, SegmentPreparer preparer, WalBuffers ring,
                      Position insert, Position published, Position written, ReadNotifier notifier,
                      SegmentLinks links, WalStats stats, long bootstrapLsn, long bootstrapPrev, RecordClock clock) {
        this.clock = clock;
        this.reservations = reservations;
        this.registry = registry;
        this.preparer = preparer;
        this.ring = ring;
        this.insert = insert;
        this.published = published;
        this.written = written;
        this.notifier = notifier;
        this.links = links;
        this.stats = stats;
        this.segmentSize = registry.segmentSize();
        this.bootstrapLsn = bootstrapLsn;
        this.bootstrapPrev = bootstrapPrev;
    }

    /**
     * Appends log bytes received from a primary, verbatim: whole records starting exactly at the insert
     * position, within one segment. The bytes are copied past the end first (invisible: the written position has
     * not moved, and recovery would cut them as a torn tail), then every record is checked in place, and only then
     * are the positions moved past them. Invalid bytes are zeroed again and refused. Returns the new written position.
     *
     * @throws io.walden.core.IllegalLsnException when {@code startLsn} is not the insert position (a gap or a repeat)
     * @throws io.walden.core.WalCorruptedException when a record fails a check (nothing is kept)
     */
    public long apply(long startLsn, ByteBuffer bytes) {
        long t = insert.get();
        if (startLsn != t || published.get() != t || written.get() != t) {
            throw new IllegalLsnException("replicated bytes start at " + Lsn.format(startLsn)
                    + " but this log ends at " + Lsn.format(t) + (written.get() != t ? " with local appends in flight" : ""));
        }
        Segment seg = registry.get(t);
        long offset = t - seg.startLsn();
        int length = bytes.remaining();
        if (length == 0) {
            return t;
        }
        if (offset + length > seg.size()) {
            throw new IllegalArgumentException("replicated bytes cross the end of segment " + seg.path().getFileName());
        }
        // The prev link the next record must carry was linked in ahead of time (at open, or by the last record).
        long linkAt = ring.offset(t) + RecordDescriptor.PREV_OFFSET;
        long expectedPrev = t == bootstrapLsn ? bootstrapPrev : ring.readLongAcquire(linkAt);
        try {
            seg.writeThroughChannel(offset, bytes, bytes.position(), length); // pwrite: the replica's flush costs half
        } catch (IOException e) {
            seg.zero(offset, offset + length); // the file as it was (the link ahead lives in the ring)
            throw new WalException("could not write replicated bytes at " + Lsn.format(t)
                    + " into " + seg.path().getFileName() + ": " + e.getMessage(), e);
        }
        long end = offset + length;
        RecordCursor records = cursor.start(view(seg), seg.startLsn(), offset, expectedPrev);
        long lastTime = RecordCursor.NO_TIME;
        while (records.offset() < end) {
            int code = records.check();
            if (code != RecordCheck.VALID || records.offset() + RecordDescriptor.aligned(records.length()) > end) {
                seg.zero(offset, end); // the file as it was (the link ahead lives in the ring)
                throw new WalCorruptedException("replicated record at " + Lsn.format(records.lsn())
                        + " fails validation (" + (code == RecordCheck.VALID ? "it runs past the bytes received" : RecordCheck.describe(code))
                        + "); nothing of this batch was kept", records.lsn(), seg.path());
            }
            lastTime = Math.max(lastTime, records.time());
            records.advance();
        }
        if (lastTime != RecordCursor.NO_TIME) {
            clock.observe(lastTime); // the primary's times: a promoted replica's own records never carry less
        }
        long prev = records.expectedPrev();
        long newEnd = seg.startLsn() + end;
        if (end == seg.size()) { // a closing record: the log continues in the next segment
            long next = seg.endLsn();
            Segment nextSeg = registry.get(next) != null ? registry.get(next) : preparer.await(next, Reservations.ROLL_WAIT_NANOS);
            links.begins(next, prev);
            stats.onRoll();
            newEnd = next + SEGMENT_HEADER;
            seg = nextSeg;
        }
        preparer.request(registry.segmentStart(newEnd) + segmentSize);
        // Written first: the bytes went to the file directly, and a writer that saw the published position move while
        // the written one had not would write the ring's zeros for this range over them. Then the link ahead moves to
        // the new end (so that appends after a promotion carry the right prev link), admitted now, and the ring keeps
        // no byte below the written position (WalBuffers' invariant).
        written.advanceTo(newEnd);
        ring.writeLong(linkAt, 0);
        reservations.linkSuccessor(newEnd, prev);
        published.advanceTo(newEnd);
        insert.advanceTo(newEnd);
        notifier.signal();
        return newEnd;
    }

    /**
     * A replica's rewind from {@code oldEnd} back to {@code lsn} (nothing appended meanwhile): the prev link written
     * ahead moves from the old end to {@code lsn}, where the next record will carry {@code prev}.
     */
    public void rewindLink(long oldEnd, long lsn, long prev) {
        ring.writeLong(ring.offset(oldEnd) + RecordDescriptor.PREV_OFFSET, 0); // no ring byte below the written position
        reservations.linkSuccessor(lsn, prev);
    }

    private ByteBuffer view(Segment s) {
        if (segment != s) {
            segment = s;
            segmentView = s.newView();
        }
        return segmentView;
    }
}
