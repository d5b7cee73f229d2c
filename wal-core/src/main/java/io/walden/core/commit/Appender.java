package io.walden.core.commit;

import io.walden.core.Durability;
import io.walden.core.metrics.WalStats;
import io.walden.core.record.RecordCheck;
import io.walden.core.record.RecordDescriptor;
import io.walden.core.segment.NativeRegion;
import io.walden.core.segment.Segment;
import io.walden.core.segment.SegmentHeaderDescriptor;
import io.walden.core.segment.SegmentPreparer;
import io.walden.core.segment.SegmentRegistry;
import net.openhft.chronicle.bytes.BytesStore;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32C;

/**
 * The lock-free append path: reserve, copy into the segment's WAL buffer, publish, advance the published position
 * (the flush leader then writes the buffer into the file: {@link LogWriter}).
 * See {@code docs/group-commit.md} for the argument; in short:
 *
 * <ol>
 *   <li><b>Reserve</b> with one CAS on the tail. A record fits at {@code t} when it leaves room for one
 *       record header before the segment's end; otherwise the CAS moves the tail into the next (already
 *       prepared) segment and its winner closes the old segment with a padding record.</li>
 *   <li><b>Link</b>: right after its CAS the reserver stores its own LSN into the prev field of the
 *       <em>next</em> record's header (release). Its successor waits for that store (acquire) before
 *       computing its CRC, so every record carries the exact LSN of its predecessor without a lock.
 *       The wait is short (two stores) and costs nothing for durability: a record can never become
 *       written before its predecessor anyway.</li>
 *   <li><b>Copy</b> header fields and payload into the mapping, in parallel with other appenders.</li>
 *   <li><b>Publish</b>: CRC-32C, then the length word with a release store, last.</li>
 *   <li><b>Written</b>: advance over the contiguous prefix of published records (acquire loads of the length words).</li>
 * </ol>
 *
 * <p>Nothing here allocates per record: the CRC and the segment view are per-thread and reused.
 * Thread-safety: every method may be called from any number of threads at once.
 */
public final class Appender {
    private static final int SEGMENT_HEADER = SegmentHeaderDescriptor.LENGTH;
    private static final int HEADER = RecordDescriptor.HEADER_LENGTH;
    private static final long ROLL_WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);
    /** From a non-waiting reserve or append: the next segment is not prepared yet; nothing was reserved. */
    public static final long NOT_READY = -1;

    private final SegmentRegistry registry;
    private final SegmentPreparer preparer;
    private final Position tail;
    private final Position published;
    private final Position written;
    private final ReadNotifier notifier;
    private final Map<Long, Long> firstPrevBySegment;
    private final long segmentSize;
    /**
     * The LSN of the first record appended after open, and its prev link: 0 when the log is new, -1 when unknown (a log
     * that begins at a later segment and holds no record yet: the first replicated record may link to anything below it).
     */
    private final long bootstrapLsn;
    private final long bootstrapPrev;
    private final WalStats stats;
    private final ThreadLocal<Scratch> scratch;

    /** Per-thread CRC state, a view of the memory last written to, and the thread's counters. */
    static final class Scratch {
        final CRC32C crc = new CRC32C();
        final WalStats.Cell stats;
        NativeRegion region;
        ByteBuffer view;

        Scratch(WalStats.Cell stats) {
            this.stats = stats;
        }

        ByteBuffer view(NativeRegion r) {
            if (region != r) {
                region = r;
                view = r.newView();
            }
            return view;
        }
    }

    /**
     * @param tail      the insert position (reservations)
     * @param published the end of the contiguous records published in the WAL buffers
     * @param written   the end of what the segment files hold (moved here only by {@link #applyReplicated}, whose
     *                  bytes go to the file directly; otherwise by {@link LogWriter})
     */
    public Appender(SegmentRegistry registry, SegmentPreparer preparer, Position tail, Position published, Position written,
                    ReadNotifier notifier, Map<Long, Long> firstPrevBySegment, long lastRecordLsn, WalStats stats) {
        this.stats = stats;
        this.scratch = ThreadLocal.withInitial(() -> new Scratch(stats.newCell()));
        this.registry = registry;
        this.preparer = preparer;
        this.tail = tail;
        this.published = published;
        this.written = written;
        this.notifier = notifier;
        this.firstPrevBySegment = firstPrevBySegment;
        this.segmentSize = registry.segmentSize();
        this.bootstrapLsn = tail.get();
        this.bootstrapPrev = lastRecordLsn; // -1: unknown (a log that begins at a later segment): replicated bytes may carry any
        Segment s = registry.get(bootstrapLsn);
        // A local append after an unknown predecessor is the first record this log knows of: it links to INVALID.
        s.buffer().writeLongRelease(bootstrapLsn - s.startLsn() + RecordDescriptor.PREV_OFFSET,
                Math.max(io.walden.core.Lsn.INVALID, lastRecordLsn));
    }

    /**
     * Reserves {@code aligned} bytes for one record and links its successor; returns the record's LSN.
     * The caller must then {@link #publish} it (or publish it as padding), or the log stalls; so a caller
     * checks that the log is open (inside its {@link Activity}) before reserving, never after.
     */
    public long reserve(long aligned) {
        return reserve(aligned, true);
    }

    /**
     * {@link #reserve(long)}, or, when {@code mayWait} is false and the record needs the next segment before the
     * segment preparer made it ready, {@link #NOT_READY} with nothing reserved (an event loop must not wait).
     */
    public long reserve(long aligned, boolean mayWait) {
        while (true) {
            long t = tail.get();
            long segmentEnd = (t & -segmentSize) + segmentSize;
            if (t + aligned + HEADER <= segmentEnd) {
                if (tail.compareAndSet(t, t + aligned)) {
                    linkSuccessor(t + aligned, t);
                    return t;
                }
                continue;
            }
            if (registry.get(segmentEnd) == null) {
                if (!mayWait) {
                    return NOT_READY;
                }
                preparer.await(segmentEnd, ROLL_WAIT_NANOS); // a full disk surfaces here, before anything is reserved
                continue;
            }
            long lsn = segmentEnd + SEGMENT_HEADER;
            if (tail.compareAndSet(t, lsn + aligned)) {
                linkSuccessor(lsn + aligned, lsn);
                try {
                    roll(t, segmentEnd, lsn);
                } catch (Throwable e) {
                    // The closing record was published by roll(); this reservation must be too, or it would hold the
                    // written position below it for good and every durable append would wait forever.
                    Segment seg = registry.get(lsn);
                    long o = lsn - seg.startLsn();
                    writeHeaderFields(seg, o, 0);
                    publish(seg, o, lsn, (int) aligned, RecordDescriptor.FLAG_PADDING, null);
                    throw e;
                }
                return lsn;
            }
        }
    }

    /**
     * Reserves, writes and publishes one record; returns its LSN. If copying the payload fails, the
     * reserved space is published as padding (the log must never stall on a reservation nobody fills).
     */
    public long append(int type, byte[] src, int offset, int length, Durability durability) {
        long lsn = reserve(RecordDescriptor.aligned(HEADER + length));
        Segment seg = registry.get(lsn);
        long o = lsn - seg.startLsn();
        int flags = RecordDescriptor.FLAG_PADDING;
        try {
            writeHeaderFields(seg, o, type);
            seg.buffer().write(o + HEADER, src, offset, length);
            flags = 0;
        } finally {
            publish(seg, o, lsn, HEADER + length, flags, durability);
        }
        return lsn;
    }

    /** {@link #append(int, byte[], int, int, Durability)} for the remaining bytes of a buffer (position unchanged). */
    public long append(int type, ByteBuffer src, Durability durability) {
        return append(type, src, durability, true);
    }

    /**
     * {@link #append(int, ByteBuffer, Durability)}; with {@code mayWait} false, {@link #NOT_READY} (nothing appended)
     * instead of waiting for the next segment to be prepared.
     */
    public long append(int type, ByteBuffer src, Durability durability, boolean mayWait) {
        int length = src.remaining();
        long lsn = reserve(RecordDescriptor.aligned(HEADER + length), mayWait);
        if (lsn == NOT_READY) {
            return NOT_READY;
        }
        Segment seg = registry.get(lsn);
        long o = lsn - seg.startLsn();
        int flags = RecordDescriptor.FLAG_PADDING;
        try {
            writeHeaderFields(seg, o, type);
            seg.buffer().write(o + HEADER, src, src.position(), length);
            flags = 0;
        } finally {
            publish(seg, o, lsn, HEADER + length, flags, durability);
        }
        return lsn;
    }

    /** {@link #append(int, byte[], int, int, Durability)} for a Chronicle store's bytes. */
    public long append(int type, BytesStore<?, ?> src, long srcOffset, int length, Durability durability) {
        long lsn = reserve(RecordDescriptor.aligned(HEADER + length));
        Segment seg = registry.get(lsn);
        long o = lsn - seg.startLsn();
        int flags = RecordDescriptor.FLAG_PADDING;
        try {
            writeHeaderFields(seg, o, type);
            seg.buffer().write(o + HEADER, src, srcOffset, length);
            flags = 0;
        } finally {
            publish(seg, o, lsn, HEADER + length, flags, durability);
        }
        return lsn;
    }

    /**
     * Appends log bytes received from a primary, verbatim: whole records starting exactly at the insert
     * position, within one segment (docs/replication-protocol.md, Data frames). The bytes are copied past the
     * end first (invisible: the written position has not moved, and recovery would cut them as a torn tail),
     * then every record is checked in place — length and fit rule, flags, the exact prev link chain, CRC-32C —
     * and only then are the positions moved past them. Invalid bytes are zeroed again and refused.
     *
     * <p>Single caller, and no local appends meanwhile (a replica's receiver). Returns the new written position.
     *
     * @throws io.walden.core.IllegalLsnException when {@code startLsn} is not the insert position (a gap or a repeat)
     * @throws io.walden.core.WalCorruptedException when a record fails a check (nothing is kept)
     */
    public long applyReplicated(long startLsn, ByteBuffer bytes) {
        long t = tail.get();
        if (startLsn != t || published.get() != t || written.get() != t) {
            throw new io.walden.core.IllegalLsnException("replicated bytes start at " + io.walden.core.Lsn.format(startLsn)
                    + " but this log ends at " + io.walden.core.Lsn.format(t) + (written.get() != t ? " with local appends in flight" : ""));
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
        long expectedPrev = t == bootstrapLsn ? bootstrapPrev : seg.buffer().readLongAcquire(offset + RecordDescriptor.PREV_OFFSET);
        try {
            seg.writeThroughChannel(offset, bytes, bytes.position(), length); // pwrite: the replica's flush costs half
        } catch (java.io.IOException e) {
            seg.zero(offset, offset + length); // the file as it was (the link ahead lives in the WAL buffer)
            throw new io.walden.core.WalException("could not write replicated bytes at " + io.walden.core.Lsn.format(t)
                    + " into " + seg.path().getFileName() + ": " + e.getMessage(), e);
        }
        Scratch s = scratch.get();
        ByteBuffer view = s.view(seg);
        long o = offset;
        long prev = expectedPrev;
        long end = offset + length;
        while (o < end) {
            int code = RecordCheck.check(view, seg.startLsn(), s.crc, o, prev);
            int recordLength = code == RecordCheck.VALID ? seg.readInt(o) : 0;
            if (code != RecordCheck.VALID || o + RecordDescriptor.aligned(recordLength) > end) {
                seg.zero(offset, end); // the file as it was (the link ahead lives in the WAL buffer)
                throw new io.walden.core.WalCorruptedException("replicated record at " + io.walden.core.Lsn.format(seg.startLsn() + o)
                        + " fails validation (" + (code == RecordCheck.VALID ? "it runs past the bytes received" : RecordCheck.describe(code))
                        + "); nothing of this batch was kept", seg.startLsn() + o, seg.path());
            }
            prev = seg.startLsn() + o;
            o += RecordDescriptor.aligned(recordLength);
        }
        long newEnd = seg.startLsn() + end;
        if (end == seg.size()) { // a closing record: the log continues in the next segment
            preparer.buffers().retire(seg); // the file holds this segment whole
            long next = seg.endLsn();
            Segment nextSeg = registry.get(next) != null ? registry.get(next) : preparer.await(next, ROLL_WAIT_NANOS);
            firstPrevBySegment.put(next, prev);
            stats.onRoll();
            newEnd = next + SEGMENT_HEADER;
            seg = nextSeg;
        }
        preparer.request(registry.segmentStart(newEnd) + segmentSize);
        linkSuccessor(newEnd, prev); // so that appends after a promotion carry the right prev link
        tail.advanceTo(newEnd);
        published.advanceTo(newEnd);
        written.advanceTo(newEnd); // the bytes went to the file directly
        notifier.signal();
        return newEnd;
    }

    /** Writes type, flags and reserved fields of a reserved record (in the WAL buffer) (for claims, before the payload is written). */
    public void writeHeaderFields(Segment seg, long offset, int type) {
        NativeRegion b = seg.buffer();
        b.writeShort(offset + RecordDescriptor.TYPE_OFFSET, (short) type);
        b.writeShort(offset + RecordDescriptor.FLAGS_OFFSET, (short) 0);
        b.writeInt(offset + RecordDescriptor.RESERVED_OFFSET, 0);
    }

    /**
     * Completes a record whose fields and payload are in place: waits for the prev link, computes the CRC,
     * releases the length word, advances the written position.
     *
     * @param flags 0, or {@link RecordDescriptor#FLAG_PADDING} to turn a failed or aborted record into
     *              padding that readers skip (the log must never stall on a reservation nobody fills)
     * @param durability the append's level, for the counters (null: not an append, e.g. a segment's closing record)
     */
    public void publish(Segment seg, long offset, long lsn, int recordLength, int flags, Durability durability) {
        NativeRegion b = seg.buffer();
        if (flags != 0) {
            b.writeShort(offset + RecordDescriptor.FLAGS_OFFSET, (short) flags);
            b.writeShort(offset + RecordDescriptor.TYPE_OFFSET, (short) 0);
        }
        awaitPrevLink(b, offset, lsn);
        Scratch s = scratch.get();
        int crc = RecordCheck.crc(s.view(b), s.crc, offset, recordLength);
        b.writeInt(offset + RecordDescriptor.CRC_OFFSET, crc);
        b.writeIntRelease(offset + RecordDescriptor.LENGTH_OFFSET, recordLength); // publication: last store
        advancePublished();
        if (flags == 0 && durability != null) {
            WalStats.onAppend(s.stats, durability, recordLength - HEADER);
        }
    }

    /**
     * Moves the published position over every record published contiguously after it in the WAL buffers; returns
     * the position. Safe from any thread: each caller validates its own range with acquire loads, and the position
     * only ever rises to the highest value a caller validated. (PostgreSQL's WaitXLogInsertionsToFinish, lock-free.)
     */
    public long advancePublished() {
        long w = published.get();
        long limit = tail.get(); // never past the reservations
        long pos = w;
        Segment seg = registry.get(pos);
        while (seg != null && pos < limit) {
            int length = seg.buffer().readIntAcquire(pos - seg.startLsn());
            if (length <= 0) {
                break;
            }
            pos += RecordDescriptor.aligned(length);
            if (pos == seg.endLsn()) {
                pos += SEGMENT_HEADER;
                seg = registry.get(pos);
            }
        }
        if (pos > w) {
            return published.advanceTo(pos);
        }
        return w;
    }

    public long insertPosition() {
        return tail.get();
    }

    public Segment segment(long lsn) {
        return registry.get(lsn);
    }

    private void linkSuccessor(long successorLsn, long lsn) {
        Segment s = registry.get(successorLsn);
        s.buffer().writeLongRelease(successorLsn - s.startLsn() + RecordDescriptor.PREV_OFFSET, lsn);
    }

    private void awaitPrevLink(NativeRegion seg, long offset, long lsn) {
        if (lsn == bootstrapLsn) {
            return; // linked at open (possibly to 0, the "no previous record" of a new log)
        }
        long at = offset + RecordDescriptor.PREV_OFFSET;
        for (int spins = 0; seg.readLongAcquire(at) == 0; spins++) {
            if (spins < 200) {
                Thread.onSpinWait();
            } else if (spins < 300) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(1_000); // the predecessor was descheduled between its CAS and its link store
            }
        }
    }

    /**
     * Closes the segment ending at {@code segmentEnd} with a padding record at {@code t}; links the new segment. The
     * closing record is published whatever happens on the way (an Error in the bookkeeping must not leave the
     * written position stuck below it); the new segment's first link is stored before anything that can fail.
     */
    private void roll(long t, long segmentEnd, long firstLsn) {
        Segment next = registry.get(firstLsn);
        next.buffer().writeLong(firstLsn - next.startLsn() + RecordDescriptor.PREV_OFFSET, t);
        Segment old = registry.get(t);
        long o = t - old.startLsn();
        try {
            firstPrevBySegment.put(segmentEnd, t);
            stats.onRoll();
            preparer.request(segmentEnd + segmentSize); // keep one segment ready ahead of the tail
        } finally {
            writeHeaderFields(old, o, 0);
            publish(old, o, t, (int) (segmentEnd - t), RecordDescriptor.FLAG_PADDING, null);
        }
    }
}
