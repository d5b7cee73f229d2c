package io.walden.core.internal.commit;

import io.walden.core.internal.metrics.WalStats;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;
import io.walden.core.internal.segment.SegmentLinks;
import io.walden.core.internal.segment.SegmentPreparer;
import io.walden.core.internal.segment.SegmentRegistry;

import java.util.concurrent.TimeUnit;

/**
 * Where each record goes: the first three steps of an append ({@link Appender}).
 *
 * <ol>
 *   <li><b>Reserve</b> with one CAS on the insert position. A record fits at {@code t} when it leaves room for one
 *       record header before the segment's end; otherwise the CAS moves the insert position into the next (already
 *       prepared) segment and its winner closes the old segment with a padding record ({@link SegmentRoll}).</li>
 *   <li><b>Admit</b>: wait until the ring memory the record (and its successor's header) will use holds nothing
 *       unwritten; if it does, write the oldest published records into the files (PostgreSQL's
 *       AdvanceXLInsertBuffer). Never a force.</li>
 *   <li><b>Time</b>: the reserver stores the record's time ({@link RecordClock}), read between loading the insert
 *       position and winning the CAS, so that times never decrease in LSN order.</li>
 *   <li><b>Link</b>: the reserver stores its own LSN into the prev field of the <em>next</em> record's header
 *       (release). Its successor waits for that store (acquire) before computing its CRC, so every record
 *       carries the exact LSN of its predecessor without a lock. The wait is short and costs nothing for
 *       durability: a record can never be written before its predecessor anyway.</li>
 * </ol>
 *
 * <p>Guarantees: reservations never overlap and leave no gap within a segment (a roll closes the old one's rest with
 * a padding record); a record never crosses a segment's end; when {@link #reserve} returns an LSN, the ring admits the
 * record and its successor's header (so it never holds more than its capacity of unwritten bytes) and the
 * successor's prev link holds the record's LSN.
 *
 * <p>Its fields are the ones a reservation reads on every append (the insert, the written position, the ring, the
 * segment size), together in one object that is never written after {@link #bind}.
 *
 * <p>Thread-safety: {@link #reserve} from any number of threads at once; {@link #bind} once, before use.
 */
public final class Reservations {
    private static final int SEGMENT_HEADER = SegmentHeaderDescriptor.LENGTH;
    private static final int HEADER = RecordDescriptor.HEADER_LENGTH;
    /** How long an appender (or a replica's write stage) waits for the preparer to ready the next segment. */
    public static final long ROLL_WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);

    private final Position insert;
    private final Position written;
    private final WalBuffers ring;
    private final long segmentSize;
    private final SegmentRegistry registry;
    private final SegmentPreparer preparer;
    private final SegmentRoll rolls;
    private final RecordClock clock;
    /** Writes the ring into the files when an appender needs room. Set once, before use. */
    private WalWriteLock writes;

    public Reservations(Appender appender, SegmentRegistry registry, SegmentPreparer preparer, WalBuffers ring, Position insert,
                 Position written, SegmentLinks links, WalStats stats, RecordClock clock) {
        this.insert = insert;
        this.clock = clock;
        this.written = written;
        this.ring = ring;
        this.segmentSize = registry.segmentSize();
        this.registry = registry;
        this.preparer = preparer;
        this.rolls = new SegmentRoll(appender, this, ring, preparer, links, stats, segmentSize);
    }

    public void bind(WalWriteLock writes, LogFailure failure) {
        this.writes = writes;
        rolls.bind(failure);
    }

    /**
     * {@link Appender#reserve(long)}, or, when {@code mayWait} is false and the record needs the next segment before
     * the segment preparer made it ready, or room in a full ring, {@link Appender#NOT_READY} with nothing reserved (an
     * event loop must not wait).
     */
    public long reserve(long aligned, boolean mayWait) {
        while (true) {
            long t = insert.get();
            long time = clock.now(); // after the load of the insert: see RecordClock on why times never decrease
            long segmentEnd = (t & -segmentSize) + segmentSize;
            if (t + aligned + HEADER <= segmentEnd) {
                if (!mayWait && !ring.admits(t + aligned + HEADER, written.get())) {
                    return Appender.NOT_READY; // admission only gets easier: checked at t, it holds once the CAS wins at t
                }
                if (insert.compareAndSet(t, t + aligned)) {
                    admit(t, t + aligned);
                    stamp(t, time);
                    return t;
                }
                continue;
            }
            if (registry.get(segmentEnd) == null) {
                if (!mayWait) {
                    return Appender.NOT_READY;
                }
                preparer.await(segmentEnd, ROLL_WAIT_NANOS); // a full disk surfaces here, before anything is reserved
                continue;
            }
            long lsn = segmentEnd + SEGMENT_HEADER;
            if (!mayWait && !ring.admits(lsn + aligned + HEADER, written.get())) {
                return Appender.NOT_READY;
            }
            if (insert.compareAndSet(t, lsn + aligned)) {
                rolls.roll(t, segmentEnd, lsn, aligned);
                stamp(lsn, time);
                return lsn;
            }
        }
    }

    /** Stores a reserved record's time (admitted: its ring memory is the record's). Unused by a record turned into padding. */
    private void stamp(long lsn, long time) {
        ring.writeLong(ring.offset(lsn) + RecordDescriptor.TIME_OFFSET, time);
    }

    /** Waits for ring room for {@code [lsn, end)} and the successor's header, notes a spill, links the successor. */
    private void admit(long lsn, long end) {
        awaitRoom(end + HEADER);
        ring.noteSpill(lsn, end);
        linkSuccessor(end, lsn);
    }

    /** Returns once the ring admits bytes up to {@code end}, writing the oldest published records if need be. */
    public void awaitRoom(long end) {
        if (!ring.admits(end, written.get())) {
            writes.makeRoom(end - ring.capacity());
        }
    }

    /**
     * Stores {@code lsn} as the prev link of the record at {@code successorLsn}: a release store, paired with the
     * acquire loads of the successor's publisher (Appender.awaitPrevLink), which computes its CRC only after it saw
     * the link, so the record carries its predecessor's exact LSN.
     */
    public void linkSuccessor(long successorLsn, long lsn) {
        ring.writeLongRelease(ring.offset(successorLsn) + RecordDescriptor.PREV_OFFSET, lsn);
    }
}
