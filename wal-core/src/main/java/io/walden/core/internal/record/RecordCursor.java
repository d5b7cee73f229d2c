package io.walden.core.internal.record;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The one walk over a segment's records (docs/format.md, "Record" and "Segment file"): a flyweight over a view of the
 * whole segment that checks the record at its offset ({@link RecordCheck}, against the prev link the chain demands),
 * reads its fields, and steps to the next record. Recovery, readers, the replica's write stage, the inspector and the
 * dictionary lookup all walk with it, so "read the length, align it, link the next record to this one, stop at the
 * segment's end" is written once.
 *
 * <p>A walk starts at a proven record boundary with the prev link the record there must carry ({@code -1}: any link
 * below it, for the first record of a scan whose predecessor is unknown). After a closing record (one that ends
 * exactly at the segment's end) {@link #advance()} says so; the caller moves to the next segment with {@link #onto},
 * and the chain continues there.
 *
 * <p>Plain loads for checked walks: callers own the segment (recovery, tools) or walk below a position they loaded
 * with acquire semantics after the records were published (readers, the replica's write stage). Walks over length
 * words alone, up to a position that may be moving (which offsets are record boundaries, a sender's chunk), step
 * with {@link #nextPublished()} instead: an acquire load of the length word, no check. The one walk not done here is
 * the appender's over the WAL buffers (Publication.advancePublished), a ring rather than a segment.
 *
 * <p>Thread-safety: none; one walk per thread. Allocates nothing but {@link #payload()}'s slice.
 */
public final class RecordCursor {
    /** Acquire loads of a length word through a view of the mapping (record offsets are 8-aligned, as atomic access needs). */
    private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    /** {@link #time()} of a record that carries none. */
    public static final long NO_TIME = Long.MIN_VALUE;

    private final CRC32C crc = new CRC32C();
    private ByteBuffer view;
    private long startLsn;
    private long offset;
    private long expectedPrev;
    private int length;

    /**
     * Starts a walk at {@code offset} of the segment seen through {@code view} (little-endian, the whole segment).
     *
     * @param expectedPrev the prev link the record at {@code offset} must carry, or -1 for any link below it
     */
    public RecordCursor start(ByteBuffer view, long startLsn, long offset, long expectedPrev) {
        this.view = view;
        this.startLsn = startLsn;
        this.offset = offset;
        this.expectedPrev = expectedPrev;
        this.length = 0;
        return this;
    }

    /** Continues the walk in the next segment, at its first record, keeping the chain. */
    public RecordCursor onto(ByteBuffer nextView, long nextStartLsn, long firstRecordOffset) {
        this.view = nextView;
        this.startLsn = nextStartLsn;
        this.offset = firstRecordOffset;
        this.length = 0;
        return this;
    }

    /**
     * Checks the record at the cursor ({@link RecordCheck#check}); when it is {@link RecordCheck#VALID} its fields
     * may be read and the walk may {@link #advance()}.
     */
    public int check() {
        int code = RecordCheck.check(view, startLsn, crc, offset, expectedPrev);
        length = code == RecordCheck.VALID ? view.getInt((int) offset + RecordDescriptor.LENGTH_OFFSET) : 0;
        return code;
    }

    /**
     * Steps past the record just checked: the next one must link to it.
     *
     * @return true when that record closed the segment (the walk goes on with {@link #onto})
     */
    public boolean advance() {
        expectedPrev = startLsn + offset;
        offset += RecordDescriptor.aligned(length);
        length = 0;
        return offset == view.capacity();
    }

    /** Moves the cursor to {@code offset} of the same segment (a record boundary the caller proved), for {@link #nextPublished()}. */
    public RecordCursor at(long offset) {
        this.offset = offset;
        this.length = 0;
        return this;
    }

    /**
     * Where the record at the cursor ends, from its length word loaded with acquire semantics (pairing with the
     * appender's release store, so the whole record is visible once its length is), without checking it or moving;
     * or -1 when no published record that fits the segment starts here (its length word not written yet, or damage).
     */
    public long nextPublished() {
        if (offset + Integer.BYTES > view.limit()) { // the VarHandle checks against the limit
            return -1;
        }
        int word = (int) INT.getAcquire(view, (int) offset);
        long next = offset + RecordDescriptor.aligned(word);
        return word < RecordDescriptor.HEADER_LENGTH || next > view.capacity() ? -1 : next;
    }

    /** The offset in the segment of the record at the cursor (after a closing record: the segment's size). */
    public long offset() {
        return offset;
    }

    /** The LSN of the record at the cursor. */
    public long lsn() {
        return startLsn + offset;
    }

    /** The prev link the record at the cursor must carry (-1: any below it); after {@link #advance()}, the record passed. */
    public long expectedPrev() {
        return expectedPrev;
    }

    /** The checked record's length (header and payload), or 0 before a valid {@link #check()}. */
    public int length() {
        return length;
    }

    public int flags() {
        return view.getShort((int) offset + RecordDescriptor.FLAGS_OFFSET) & 0xFFFF;
    }

    public int type() {
        return view.getShort((int) offset + RecordDescriptor.TYPE_OFFSET) & 0xFFFF;
    }

    /** The prev link the record carries. */
    public long prevLink() {
        return view.getLong((int) offset + RecordDescriptor.PREV_OFFSET);
    }

    /**
     * The checked record's time, microseconds since the epoch (UTC), or {@link #NO_TIME} for a record without one
     * (padding, or written by format 1).
     */
    public long time() {
        return (flags() & RecordDescriptor.FLAG_TIME) != 0 ? view.getLong((int) offset + RecordDescriptor.TIME_OFFSET) : NO_TIME;
    }

    /** A little-endian view of the checked record's stored payload (shares the segment's memory). */
    public ByteBuffer payload() {
        int at = (int) offset + RecordDescriptor.payloadOffset(flags());
        return view.duplicate().limit((int) offset + length).position(at).slice().order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * Walks from the record boundary {@code from} over published length words below {@code limit} to the first record
     * that carries a time at or after {@code micros}; returns its offset, or -1. For seeking by time (TimeIndex).
     */
    public static long firstTimed(ByteBuffer view, long from, long limit, long micros) {
        RecordCursor walk = new RecordCursor().start(view, 0, from, -1);
        for (long at = from; at >= 0 && at < limit; at = walk.at(at).nextPublished()) {
            int flags = view.getShort((int) at + RecordDescriptor.FLAGS_OFFSET) & 0xFFFF;
            if ((flags & RecordDescriptor.FLAG_TIME) != 0 && view.getLong((int) at + RecordDescriptor.TIME_OFFSET) >= micros) {
                return at;
            }
        }
        return -1;
    }
}
