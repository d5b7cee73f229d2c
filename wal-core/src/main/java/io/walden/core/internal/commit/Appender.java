package io.walden.core.internal.commit;

import io.walden.core.Compression;
import io.walden.core.Durability;
import io.walden.core.Lsn;
import io.walden.core.internal.metrics.WalStats;
import io.walden.core.internal.record.DictionaryTrainer;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.segment.SegmentLinks;
import io.walden.core.internal.segment.SegmentPreparer;
import io.walden.core.internal.segment.SegmentRegistry;

import java.nio.ByteBuffer;

/**
 * The lock-free append path (docs/group-commit.md, "The append path"; each step is argued where it is done):
 *
 * <ol>
 *   <li><b>Reserve</b> an LSN with one CAS on the insert, rolling into the next segment when the record does not fit
 *       ({@link Reservations}; {@link SegmentRoll}).</li>
 *   <li><b>Admit</b> it into the WAL buffers ({@link WalBuffers}), writing the oldest records out if the ring is full.</li>
 *   <li><b>Link</b> the successor: this record's LSN into the next record's prev field, with a release store.</li>
 *   <li><b>Copy</b> header fields and payload into the ring, in parallel with other appenders (here).</li>
 *   <li><b>Publish</b>: wait for this record's own link (acquire), CRC-32C, then the length word with a release
 *       store, last ({@link Publication}).</li>
 *   <li><b>Published</b>: advance the published position over the contiguous prefix of published records
 *       ({@link Publication}); the {@link LogWriter} then writes the ring into the files.</li>
 * </ol>
 *
 * <p>A replica's verbatim appends are {@link ReplicatedAppends}, compressed payloads {@link CompressedAppends}. Every
 * part is a final class behind a final field, so the JIT inlines the whole path as one. Nothing here allocates per
 * record.
 * Thread-safety: every method may be called from any number of threads at once, except {@link #applyReplicated} and
 * {@link #rewindLink} (one caller, no local appends meanwhile).
 */
public final class Appender {
    /** Header and time: where the payload of every record appended here starts (docs/format.md, format 2). */
    private static final int HEADER = RecordDescriptor.TIMED_HEADER_LENGTH;
    /** From a non-waiting reserve or append: the next segment is not prepared yet, or the ring is full; nothing was reserved. */
    public static final long NOT_READY = -1;

    // The first three are read by every append; what the reservation and the publication read is in their own objects.
    private final WalBuffers ring;
    private final Reservations reservations;
    private final Publication publication;
    private final Position insert;
    private final SegmentRegistry registry;
    private final CompressedAppends compressed;
    private final ReplicatedAppends replicated;

    /**
     * @param insert      the insert position (reservations)
     * @param published the end of the contiguous records published in the WAL buffers
     * @param written   the end of what the segment files hold (moved here only by {@link #applyReplicated}, whose
     *                  bytes go to the file directly; otherwise by {@link LogWriter})
     * @param links     the prev link of each segment's first record; the roll ({@link SegmentRoll}) records a new
     *                  segment's before the closing record is published
     * @param lastRecordLsn the prev link of the first record appended after open: 0 when the log is new, -1 when
     *                  unknown (a log that begins at a later segment and holds no record yet: the first replicated
     *                  record may link to anything below it)
     */
    public Appender(SegmentRegistry registry, SegmentPreparer preparer, WalBuffers ring, Position insert, Position published,
                    Position written, ReadNotifier notifier, SegmentLinks links, long lastRecordLsn,
                    WalStats stats, DictionaryTrainer dictionaries, RecordClock clock) {
        this.ring = ring;
        this.registry = registry;
        this.insert = insert;
        long bootstrapLsn = insert.get();
        this.reservations = new Reservations(this, registry, preparer, ring, insert, written, links, stats, clock);
        this.publication = new Publication(ring, insert, published, written, registry.segmentSize(), stats, bootstrapLsn);
        this.compressed = new CompressedAppends(this, dictionaries, registry.segmentSize());
        this.replicated = new ReplicatedAppends(reservations, registry, preparer, ring, insert, published, written, notifier,
                links, stats, bootstrapLsn, lastRecordLsn, clock);
        // A local append after an unknown predecessor is the first record this log knows of: it links to INVALID.
        reservations.linkSuccessor(bootstrapLsn, Math.max(Lsn.INVALID, lastRecordLsn));
    }

    /** Wiring, from GroupCommit's constructor (before any append): what the steps need of the commit side. */
    public void bind(LogFailure failure, WalWriteLock writes) {
        reservations.bind(writes, failure);
        publication.bind(failure);
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
     * record's LSN ({@link Reservations}). The caller must then {@link #publish} it (or publish it as padding), or the
     * log stalls; so a caller checks that the log is open (inside its {@link Activity}) before reserving, never after.
     *
     * @throws io.walden.core.WalFailedException when the log failed while the record waited for room in the ring
     *         (nothing may be stored then: the reservation is abandoned with the log)
     */
    public long reserve(long aligned) {
        return reservations.reserve(aligned, true);
    }

    /**
     * {@link #reserve(long)}, or, when {@code mayWait} is false and the record needs the next segment before the
     * segment preparer made it ready, or room in a full ring, {@link #NOT_READY} with nothing reserved (an event
     * loop must not wait).
     */
    public long reserve(long aligned, boolean mayWait) {
        return reservations.reserve(aligned, mayWait);
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

    /**
     * Appends a control record (docs/format.md, "Control records"): the log's own, which readers never see, nor the
     * append meters count (they count the application's appends).
     */
    public long appendControl(byte[] payload) {
        return appendStored(0, payload, 0, payload.length, RecordDescriptor.FLAG_CONTROL, null);
    }

    private long appendStored(int type, byte[] src, int offset, int length, int recordFlags, Durability durability) {
        return fill(reservations.reserve(RecordDescriptor.aligned(HEADER + length), true), type, src, offset, length, recordFlags, durability);
    }

    /** {@link #appendStored(int, byte[], int, int, int, Durability)}, or {@link #NOT_READY} as {@link #reserve(long, boolean)}. */
    public long appendStored(int type, byte[] src, int offset, int length, int recordFlags, Durability durability, boolean mayWait) {
        long lsn = reservations.reserve(RecordDescriptor.aligned(HEADER + length), mayWait);
        return lsn == NOT_READY ? NOT_READY : fill(lsn, type, src, offset, length, recordFlags, durability);
    }

    /**
     * Writes a reserved record's header fields ({@code recordFlags}: a codec's flag, the control flag, or 0) and
     * payload, then publishes it.
     */
    public long fill(long lsn, int type, byte[] src, int offset, int length, int recordFlags, Durability durability) {
        long o = ring.offset(lsn);
        int flags = RecordDescriptor.FLAG_PADDING;
        try {
            writeHeaderFields(lsn, type);
            if (recordFlags != 0) {
                ring.writeShort(o + RecordDescriptor.FLAGS_OFFSET, (short) (recordFlags | RecordDescriptor.FLAG_TIME));
            }
            ring.write(o + HEADER, src, offset, length);
            flags = 0;
        } finally {
            publication.publish(lsn, HEADER + length, flags, durability);
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
        long lsn = reservations.reserve(RecordDescriptor.aligned(HEADER + length), mayWait);
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
            publication.publish(lsn, HEADER + length, flags, durability);
        }
        return lsn;
    }

    /**
     * Appends log bytes received from a primary, verbatim ({@link ReplicatedAppends#apply}); returns the new written
     * position. Single caller, and no local appends meanwhile (a replica's receiver).
     *
     * @throws io.walden.core.IllegalLsnException when {@code startLsn} is not the insert position (a gap or a repeat)
     * @throws io.walden.core.WalCorruptedException when a record fails a check (nothing is kept)
     */
    public long applyReplicated(long startLsn, ByteBuffer bytes) {
        return replicated.apply(startLsn, bytes);
    }

    /**
     * Writes type, flags and reserved fields of a reserved record in the ring (for claims, before the payload is
     * written); the flags say it carries the time its reservation stored ({@link Reservations#reserve}).
     */
    public void writeHeaderFields(long lsn, int type) {
        // type (u16), flags (u16) and the reserved word are bytes 16..23, little-endian: one 8-byte store, not three
        ring.writeLong(ring.offset(lsn) + RecordDescriptor.TYPE_OFFSET,
                (type & 0xFFFFL) | ((long) RecordDescriptor.FLAG_TIME << 16));
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
        publication.publish(lsn, recordLength, flags, durability);
    }

    /** Moves the published position over the records published contiguously after it ({@link Publication}); returns it. */
    public long advancePublished() {
        return publication.advancePublished();
    }

    public long insertPosition() {
        return insert.get();
    }

    /**
     * A replica's rewind from {@code oldEnd} back to {@code lsn} (ReplicatedLog.rewindTo; nothing appended meanwhile): the
     * prev link written ahead moves from the old end to {@code lsn}, where the next record will carry {@code prev}.
     */
    public void rewindLink(long oldEnd, long lsn, long prev) {
        replicated.rewindLink(oldEnd, lsn, prev);
        compressed.forgetCopy();
    }

    public Segment segment(long lsn) {
        return registry.get(lsn);
    }
}
