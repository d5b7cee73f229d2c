package io.walden.core.commit;

import io.walden.core.Compression;
import io.walden.core.Durability;
import io.walden.core.metrics.WalStats;
import io.walden.core.record.DictionaryTrainer;
import io.walden.core.record.RecordCheck;
import io.walden.core.record.RecordCursor;
import io.walden.core.record.RecordDescriptor;
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
 * The lock-free append path: reserve, copy into the WAL buffers ({@link WalBuffers}), publish, advance the published
 * position (the {@link LogWriter} then writes the ring into the files). See {@code docs/group-commit.md} for the
 * argument; in short:
 *
 * <ol>
 *   <li><b>Reserve</b> with one CAS on the tail. A record fits at {@code t} when it leaves room for one
 *       record header before the segment's end; otherwise the CAS moves the tail into the next (already
 *       prepared) segment and its winner closes the old segment with a padding record.</li>
 *   <li><b>Admit</b>: wait until the ring memory the record (and its successor's header) will use holds nothing
 *       unwritten; if it does, write the oldest published records into the files (PostgreSQL's
 *       AdvanceXLInsertBuffer). Never a force.</li>
 *   <li><b>Link</b>: the reserver stores its own LSN into the prev field of the <em>next</em> record's header
 *       (release). Its successor waits for that store (acquire) before computing its CRC, so every record
 *       carries the exact LSN of its predecessor without a lock. The wait is short and costs nothing for
 *       durability: a record can never be written before its predecessor anyway.</li>
 *   <li><b>Copy</b> header fields and payload into the ring, in parallel with other appenders.</li>
 *   <li><b>Publish</b>: CRC-32C, then the length word with a release store, last.</li>
 *   <li><b>Published</b>: advance over the contiguous prefix of published records (acquire loads of the length words).</li>
 * </ol>
 *
 * <p>Nothing here allocates per record: the CRC and the ring view are per-thread and reused.
 * Thread-safety: every method may be called from any number of threads at once.
 */
public final class Appender {
    private static final int SEGMENT_HEADER = SegmentHeaderDescriptor.LENGTH;
    private static final int HEADER = RecordDescriptor.HEADER_LENGTH;
    private static final long ROLL_WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);
    /** From a non-waiting reserve or append: the next segment is not prepared yet, or the ring is full; nothing was reserved. */
    public static final long NOT_READY = -1;

    private final SegmentRegistry registry;
    private final SegmentPreparer preparer;
    private final WalBuffers ring;
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
    private final CompressedAppends compressed;
    /** Writes the ring into the files when an appender needs room, and knows whether the log failed. Set once, before use. */
    private GroupCommit commit;

    /** Per-thread CRC state, the thread's view of the ring and of segments, and the thread's counters. */
    static final class Scratch {
        final CRC32C crc = new CRC32C();
        final WalStats.Cell stats;
        final ByteBuffer ringView;
        Segment segment;
        ByteBuffer segmentView;
        final RecordCursor cursor = new RecordCursor();

        Scratch(WalStats.Cell stats, WalBuffers ring) {
            this.stats = stats;
            this.ringView = ring.newView();
        }

        ByteBuffer view(Segment s) {
            if (segment != s) {
                segment = s;
                segmentView = s.newView();
            }
            return segmentView;
        }
    }

    /**
     * @param tail      the insert position (reservations)
     * @param published the end of the contiguous records published in the WAL buffers
     * @param written   the end of what the segment files hold (moved here only by {@link #applyReplicated}, whose
     *                  bytes go to the file directly; otherwise by {@link LogWriter})
     * @param firstPrevBySegment the prev link of each segment's first record (the LSN of the closing record of the
     *                  segment before), by segment start; written here at each roll, before the closing record is published
     */
    public Appender(SegmentRegistry registry, SegmentPreparer preparer, WalBuffers ring, Position tail, Position published,
                    Position written, ReadNotifier notifier, Map<Long, Long> firstPrevBySegment, long lastRecordLsn,
                    WalStats stats, DictionaryTrainer dictionaries) {
        this.stats = stats;
        this.ring = ring;
        this.scratch = ThreadLocal.withInitial(() -> new Scratch(stats.newCell(), ring));
        this.registry = registry;
        this.preparer = preparer;
        this.tail = tail;
        this.published = published;
        this.written = written;
        this.notifier = notifier;
        this.firstPrevBySegment = firstPrevBySegment;
        this.segmentSize = registry.segmentSize();
        this.compressed = new CompressedAppends(this, dictionaries, segmentSize);
        this.bootstrapLsn = tail.get();
        this.bootstrapPrev = lastRecordLsn; // -1: unknown (a log that begins at a later segment): replicated bytes may carry any
        // A local append after an unknown predecessor is the first record this log knows of: it links to INVALID.
        ring.writeLongRelease(ring.offset(bootstrapLsn) + RecordDescriptor.PREV_OFFSET, Math.max(io.walden.core.Lsn.INVALID, lastRecordLsn));
    }

    void bind(GroupCommit commit) {
        this.commit = commit;
    }

    /** The log is closing and no appender is inside (WalParts.close): frees what compressed appends hold. */
    public void close() {
        compressed.close();
    }

    /** The WAL buffers (for claims' windows). */
    public WalBuffers ring() {
        return ring;
    }

    /**
     * Reserves {@code aligned} bytes for one record, admits it into the ring and links its successor; returns the
     * record's LSN. The caller must then {@link #publish} it (or publish it as padding), or the log stalls; so a
     * caller checks that the log is open (inside its {@link Activity}) before reserving, never after.
     *
     * @throws io.walden.core.WalFailedException when the log failed while the record waited for room in the ring
     *         (nothing may be stored then: the reservation is abandoned with the log)
     */
    public long reserve(long aligned) {
        return reserve(aligned, true);
    }

    /**
     * {@link #reserve(long)}, or, when {@code mayWait} is false and the record needs the next segment before the
     * segment preparer made it ready, or room in a full ring, {@link #NOT_READY} with nothing reserved (an event
     * loop must not wait).
     */
    public long reserve(long aligned, boolean mayWait) {
        while (true) {
            long t = tail.get();
            long segmentEnd = (t & -segmentSize) + segmentSize;
            if (t + aligned + HEADER <= segmentEnd) {
                if (!mayWait && !ring.admits(t + aligned + HEADER, written.get())) {
                    return NOT_READY; // admission only gets easier: checked at t, it holds once the CAS wins at t
                }
                if (tail.compareAndSet(t, t + aligned)) {
                    admit(t, t + aligned);
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
            if (!mayWait && !ring.admits(lsn + aligned + HEADER, written.get())) {
                return NOT_READY;
            }
            if (tail.compareAndSet(t, lsn + aligned)) {
                roll(t, segmentEnd, lsn, aligned);
                return lsn;
            }
        }
    }

    /** Waits for ring room for {@code [lsn, end)} and the successor's header, notes a spill, links the successor. */
    private void admit(long lsn, long end) {
        awaitRoom(end + HEADER);
        ring.noteSpill(lsn, end);
        linkSuccessor(end, lsn);
    }

    private void awaitRoom(long end) {
        if (!ring.admits(end, written.get())) {
            commit.makeRoom(end - ring.capacity());
        }
    }

    /**
     * Reserves, writes and publishes one record; returns its LSN. If copying the payload fails, the
     * reserved space is published as padding (the log must never stall on a reservation nobody fills).
     */
    public long append(int type, byte[] src, int offset, int length, Durability durability) {
        return appendStored(type, src, offset, length, 0, durability);
    }

    /**
     * {@link #append(int, byte[], int, int, Durability)}, stored compressed with {@code compression} when that saves
     * space ({@link CompressedAppends}).
     */
    public long append(int type, byte[] src, int offset, int length, Compression compression, Durability durability) {
        if (compression == Compression.NONE || length < Compression.MIN_PAYLOAD) {
            return appendStored(type, src, offset, length, 0, durability);
        }
        return compressed.append(type, src, offset, length, compression, durability, true);
    }

    /** {@link #append(int, ByteBuffer, Durability, boolean)}, compressed as {@link #append(int, byte[], int, int, Compression, Durability)}. */
    public long append(int type, ByteBuffer src, Compression compression, Durability durability, boolean mayWait) {
        if (compression == Compression.NONE || src.remaining() < Compression.MIN_PAYLOAD) {
            return append(type, src, durability, mayWait);
        }
        return compressed.append(type, src, compression, durability, mayWait);
    }

    /** Appends a control record (docs/format.md, "Control records"): the log's own, which readers never see. */
    public long appendControl(byte[] payload, Durability durability) {
        return appendStored(0, payload, 0, payload.length, RecordDescriptor.FLAG_CONTROL, durability);
    }

    private long appendStored(int type, byte[] src, int offset, int length, int recordFlags, Durability durability) {
        return fill(reserve(RecordDescriptor.aligned(HEADER + length)), type, src, offset, length, recordFlags, durability);
    }

    /** {@link #appendStored(int, byte[], int, int, int, Durability)}, or {@link #NOT_READY} as {@link #reserve(long, boolean)}. */
    long appendStored(int type, byte[] src, int offset, int length, int recordFlags, Durability durability, boolean mayWait) {
        long lsn = reserve(RecordDescriptor.aligned(HEADER + length), mayWait);
        return lsn == NOT_READY ? NOT_READY : fill(lsn, type, src, offset, length, recordFlags, durability);
    }

    /**
     * Writes a reserved record's header fields ({@code recordFlags}: a codec's flag, the control flag, or 0) and
     * payload, then publishes it.
     */
    long fill(long lsn, int type, byte[] src, int offset, int length, int recordFlags, Durability durability) {
        long o = ring.offset(lsn);
        int flags = RecordDescriptor.FLAG_PADDING;
        try {
            writeHeaderFields(lsn, type);
            if (recordFlags != 0) {
                ring.writeShort(o + RecordDescriptor.FLAGS_OFFSET, (short) recordFlags);
            }
            ring.write(o + HEADER, src, offset, length);
            flags = 0;
        } finally {
            publish(lsn, HEADER + length, flags, durability);
        }
        return lsn;
    }

    /** {@link #append(int, byte[], int, int, Durability)} for the remaining bytes of a buffer (position unchanged). */
    public long append(int type, ByteBuffer src, Durability durability) {
        return append(type, src, durability, true);
    }

    /**
     * {@link #append(int, ByteBuffer, Durability)}; with {@code mayWait} false, {@link #NOT_READY} (nothing appended)
     * instead of waiting for the next segment to be prepared or for room in the ring.
     */
    public long append(int type, ByteBuffer src, Durability durability, boolean mayWait) {
        int length = src.remaining();
        long lsn = reserve(RecordDescriptor.aligned(HEADER + length), mayWait);
        if (lsn == NOT_READY) {
            return NOT_READY;
        }
        long o = ring.offset(lsn);
        int flags = RecordDescriptor.FLAG_PADDING;
        try {
            writeHeaderFields(lsn, type);
            ring.write(o + HEADER, src, src.position(), length);
            flags = 0;
        } finally {
            publish(lsn, HEADER + length, flags, durability);
        }
        return lsn;
    }

    /** {@link #append(int, byte[], int, int, Durability)} for a Chronicle store's bytes. */
    public long append(int type, BytesStore<?, ?> src, long srcOffset, int length, Durability durability) {
        long lsn = reserve(RecordDescriptor.aligned(HEADER + length));
        long o = ring.offset(lsn);
        int flags = RecordDescriptor.FLAG_PADDING;
        try {
            writeHeaderFields(lsn, type);
            ring.write(o + HEADER, src, srcOffset, length);
            flags = 0;
        } finally {
            publish(lsn, HEADER + length, flags, durability);
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
        long linkAt = ring.offset(t) + RecordDescriptor.PREV_OFFSET;
        long expectedPrev = t == bootstrapLsn ? bootstrapPrev : ring.readLongAcquire(linkAt);
        try {
            seg.writeThroughChannel(offset, bytes, bytes.position(), length); // pwrite: the replica's flush costs half
        } catch (java.io.IOException e) {
            seg.zero(offset, offset + length); // the file as it was (the link ahead lives in the ring)
            throw new io.walden.core.WalException("could not write replicated bytes at " + io.walden.core.Lsn.format(t)
                    + " into " + seg.path().getFileName() + ": " + e.getMessage(), e);
        }
        Scratch s = scratch.get();
        long end = offset + length;
        RecordCursor records = s.cursor.start(s.view(seg), seg.startLsn(), offset, expectedPrev);
        while (records.offset() < end) {
            int code = records.check();
            if (code != RecordCheck.VALID || records.offset() + RecordDescriptor.aligned(records.length()) > end) {
                seg.zero(offset, end); // the file as it was (the link ahead lives in the ring)
                throw new io.walden.core.WalCorruptedException("replicated record at " + io.walden.core.Lsn.format(records.lsn())
                        + " fails validation (" + (code == RecordCheck.VALID ? "it runs past the bytes received" : RecordCheck.describe(code))
                        + "); nothing of this batch was kept", records.lsn(), seg.path());
            }
            records.advance();
        }
        long prev = records.expectedPrev();
        long newEnd = seg.startLsn() + end;
        if (end == seg.size()) { // a closing record: the log continues in the next segment
            long next = seg.endLsn();
            Segment nextSeg = registry.get(next) != null ? registry.get(next) : preparer.await(next, ROLL_WAIT_NANOS);
            firstPrevBySegment.put(next, prev);
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
        linkSuccessor(newEnd, prev);
        published.advanceTo(newEnd);
        tail.advanceTo(newEnd);
        notifier.signal();
        return newEnd;
    }

    /** Writes type, flags and reserved fields of a reserved record in the ring (for claims, before the payload is written). */
    public void writeHeaderFields(long lsn, int type) {
        long o = ring.offset(lsn);
        ring.writeShort(o + RecordDescriptor.TYPE_OFFSET, (short) type);
        ring.writeShort(o + RecordDescriptor.FLAGS_OFFSET, (short) 0);
        ring.writeInt(o + RecordDescriptor.RESERVED_OFFSET, 0);
    }

    /**
     * Completes a record whose fields and payload are in place: waits for the prev link, computes the CRC,
     * releases the length word, advances the published position.
     *
     * @param flags 0, or {@link RecordDescriptor#FLAG_PADDING} to turn a failed or aborted record into
     *              padding that readers skip (the log must never stall on a reservation nobody fills)
     * @param durability the append's level, for the counters (null: not an append, e.g. a segment's closing record)
     */
    public void publish(long lsn, int recordLength, int flags, Durability durability) {
        long o = ring.offset(lsn);
        if (flags != 0) {
            ring.writeShort(o + RecordDescriptor.FLAGS_OFFSET, (short) flags);
            ring.writeShort(o + RecordDescriptor.TYPE_OFFSET, (short) 0);
        }
        awaitPrevLink(o, lsn);
        Scratch s = scratch.get();
        int crc = RecordCheck.crc(s.ringView, s.crc, o, recordLength);
        ring.writeInt(o + RecordDescriptor.CRC_OFFSET, crc);
        ring.writeIntRelease(o + RecordDescriptor.LENGTH_OFFSET, recordLength); // publication: last store
        advancePublished();
        if (flags == 0 && durability != null) {
            WalStats.onAppend(s.stats, durability, recordLength - HEADER);
        }
    }

    /**
     * Moves the published position over every record published contiguously after it in the ring; returns the
     * position. Safe from any thread inside the log's {@link Activity}: each caller validates its own range with
     * acquire loads, and the position only ever rises to the highest value a caller validated. (PostgreSQL's
     * WaitXLogInsertionsToFinish, lock-free.)
     *
     * <p>Two checks keep a caller from trusting memory that is not the record it looks for: it reads a length word
     * only once the ring admits that record's header (else the memory may still hold an older lap's bytes), and
     * after each read it re-reads the published position: if someone moved it past, the memory may be being zeroed
     * by the writer (a word read mid-zeroing is torn) or reused, so the caller starts again from there.
     */
    public long advancePublished() {
        long pos = published.get();
        long start = pos;
        long limit = tail.get(); // never past the reservations
        while (pos < limit && ring.admits(pos + HEADER, written.get())) {
            int length = ring.readIntAcquire(ring.offset(pos));
            long now = published.get();
            if (now > pos) {
                pos = start = now;
                continue;
            }
            if (length <= 0) {
                break;
            }
            pos += RecordDescriptor.aligned(length);
            if ((pos & (segmentSize - 1)) == 0) {
                pos += SEGMENT_HEADER; // a closing record: the next record follows the next segment's header
            }
        }
        return pos > start ? published.advanceTo(pos) : published.get();
    }

    public long insertPosition() {
        return tail.get();
    }

    /**
     * A replica's rewind from {@code oldEnd} back to {@code lsn} (ReplicatedLog.rewindTo; nothing appended meanwhile): the
     * prev link written ahead moves from the old end to {@code lsn}, where the next record will carry {@code prev}.
     */
    public void rewindLink(long oldEnd, long lsn, long prev) {
        ring.writeLong(ring.offset(oldEnd) + RecordDescriptor.PREV_OFFSET, 0); // no ring byte below the written position
        linkSuccessor(lsn, prev);
        compressed.forgetCopy();
    }

    public Segment segment(long lsn) {
        return registry.get(lsn);
    }

    private void linkSuccessor(long successorLsn, long lsn) {
        ring.writeLongRelease(ring.offset(successorLsn) + RecordDescriptor.PREV_OFFSET, lsn);
    }

    private void awaitPrevLink(long offset, long lsn) {
        if (lsn == bootstrapLsn) {
            return; // linked at open (possibly to 0, the "no previous record" of a new log)
        }
        long at = offset + RecordDescriptor.PREV_OFFSET;
        for (int spins = 0; ring.readLongAcquire(at) == 0; spins++) {
            if (spins < 200) {
                Thread.onSpinWait();
            } else if (spins < 300) {
                Thread.yield();
            } else {
                // The predecessor was descheduled between its CAS and its link store, or waits for room in the ring;
                // if the log failed meanwhile, it never links: give up with the log.
                commit.checkNotFailed();
                LockSupport.parkNanos(1_000);
            }
        }
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
    private void roll(long t, long segmentEnd, long firstLsn, long aligned) {
        awaitRoom(segmentEnd);
        Throwable bookkeeping = null;
        try {
            firstPrevBySegment.put(segmentEnd, t);
            stats.onRoll();
            preparer.request(segmentEnd + segmentSize); // keep one segment ready ahead of the tail
        } catch (Throwable e) {
            bookkeeping = e;
        }
        try {
            writeHeaderFields(t, 0);
            publish(t, (int) (segmentEnd - t), RecordDescriptor.FLAG_PADDING, null);
            awaitRoom(firstLsn + aligned + HEADER);
            ring.noteSpill(firstLsn, firstLsn + aligned);
            ring.writeLongRelease(ring.offset(firstLsn) + RecordDescriptor.PREV_OFFSET, t);
            linkSuccessor(firstLsn + aligned, firstLsn);
            if (bookkeeping != null) {
                writeHeaderFields(firstLsn, 0);
                publish(firstLsn, (int) aligned, RecordDescriptor.FLAG_PADDING, null);
            }
        } catch (Throwable e) {
            commit.fail("a segment roll at " + io.walden.core.Lsn.format(segmentEnd) + " could not complete: " + e, e);
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
