package io.walden.core.internal.commit;

import io.walden.core.Durability;
import io.walden.core.internal.metrics.WalStats;
import io.walden.core.internal.record.RecordCheck;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The last two steps of an append ({@link Appender}): <b>publish</b> a record whose fields and payload are in the ring
 * (wait for its prev link, CRC-32C, then the length word with a release store, last), and move the
 * <b>published</b> position over the contiguous prefix of published records (acquire loads of the length words;
 * PostgreSQL's WaitXLogInsertionsToFinish, lock-free): both sides of the length words' release/acquire pair.
 *
 * <p>Guarantees: a record's length word is stored only after its prev link was seen and its CRC stored, so a
 * non-zero length word means a complete record; the published position only rises, never past the insert position,
 * and only over records whose length word was read with an acquire load, so everything below it is complete in the
 * ring and the {@link LogWriter} may write it.
 *
 * <p>Its fields are the ones publication reads on every append, together in one object that is never written after
 * {@link #bind}. Nothing allocates per record: the CRC and the ring view are per-thread and reused.
 *
 * <p>Thread-safety: every method from any number of threads at once, inside the log's {@link Activity};
 * {@link #bind} once, before use.
 */
public final class Publication {
    private static final int SEGMENT_HEADER = SegmentHeaderDescriptor.LENGTH;
    private static final int HEADER = RecordDescriptor.HEADER_LENGTH;

    private final WalBuffers ring;
    private final ThreadLocal<Scratch> scratch;
    /** The LSN of the first record appended after open: linked at open, so its publisher waits for no predecessor. */
    private final long bootstrapLsn;
    private final Position insert;
    private final Position published;
    private final Position written;
    private final long segmentSize;
    /** Knows whether the log failed (a predecessor that never links). Set once, before use. */
    private LogFailure failure;

    /** Per-thread CRC state, the thread's view of the ring, and the thread's counters. */
    public static final class Scratch {
        final CRC32C crc = new CRC32C();
        final WalStats.Cell stats;
        final ByteBuffer ringView;

        Scratch(WalStats.Cell stats, WalBuffers ring) {
            this.stats = stats;
            this.ringView = ring.newView();
        }
    }

    public Publication(WalBuffers ring, Position insert, Position published, Position written, long segmentSize, WalStats stats,
                long bootstrapLsn) {
        this.ring = ring;
        this.scratch = ThreadLocal.withInitial(() -> new Scratch(stats.newCell(), ring));
        this.bootstrapLsn = bootstrapLsn;
        this.insert = insert;
        this.published = published;
        this.written = written;
        this.segmentSize = segmentSize;
    }

    public void bind(LogFailure failure) {
        this.failure = failure;
    }

    /** {@link Appender#publish}. */
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
        if (flags == 0 && durability != null) { // the one place appends are counted: an application's record, stored
            WalStats.onAppend(s.stats, durability, recordLength - RecordDescriptor.TIMED_HEADER_LENGTH);
        }
    }

    /**
     * The Link step's acquire side: waits for the predecessor's release store of this record's prev link
     * ({@link Reservations#linkSuccessor}), so that the CRC computed after it covers the exact link.
     */
    private void awaitPrevLink(long offset, long lsn) {
        if (lsn == bootstrapLsn) {
            return; // linked at open (possibly to 0, the "no previous record" of a new log)
        }
        long at = offset + RecordDescriptor.PREV_OFFSET;
        for (int spins = 0; ring.readLongAcquire(at) == 0; spins++) {
            if (spins >= Backoff.SLEEPS_FROM) {
                // The predecessor was descheduled between its CAS and its link store, or waits for room in the ring;
                // if the log failed meanwhile, it never links: give up with the log.
                failure.check();
            }
            Backoff.pause(spins);
        }
    }

    /**
     * Moves the published position over every record published contiguously after it in the ring; returns the
     * position. Each caller validates its own range with acquire loads, and the position only ever rises to the
     * highest value a caller validated.
     *
     * <p>Two checks keep a caller from trusting memory that is not the record it looks for: it reads a length word
     * only once the ring admits that record's header (else the memory may still hold an older lap's bytes), and
     * after each read it re-reads the published position: if someone moved it past, the memory may be being zeroed
     * by the writer (a word read mid-zeroing is torn) or reused, so the caller starts again from there.
     */
    public long advancePublished() {
        long pos = published.get();
        long start = pos;
        long limit = insert.get(); // never past the reservations
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
}
