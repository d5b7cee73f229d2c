package io.walden.core.internal.record;


import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Validates a record in place and computes record CRCs. Results are small int codes, not exceptions:
 * recovery meets invalid records as a matter of course (every log ends at one).
 *
 * <p>Order of checks (PostgreSQL's rule: bound the length before trusting anything, trust nothing before
 * the CRC passes): length word, fits in the segment, flags and reserved bits, room for the time and a compressed
 * payload's prefix, previous-record link, CRC. The time itself is not judged: it is whatever the primary's clock
 * said, covered by the CRC like every other byte.
 *
 * <p>Thread-safety: stateless; the {@link CRC32C} and view passed in belong to the calling thread. The view
 * must be little-endian and span the whole segment (its capacity is the segment size).
 */
public final class RecordCheck {
    public static final int VALID = 0;
    /** Length word is zero: no record here (the normal end of a log). */
    public static final int END = 1;
    public static final int BAD_LENGTH = 2;
    public static final int BAD_FLAGS = 3;
    public static final int BAD_PREV = 4;
    public static final int BAD_CRC = 5;

    /**
     * Slicing-by-4 tables of CRC-32C (reflected polynomial 0x82F63B78): entry {@code k << 8 | b} is the CRC state after
     * byte {@code b} followed by {@code k} zero bytes.
     */
    private static final int[] LENGTH_TABLES = new int[4 << 8];

    static {
        for (int b = 0; b < 256; b++) {
            int c = b;
            for (int bit = 0; bit < 8; bit++) {
                c = (c & 1) != 0 ? (c >>> 1) ^ 0x82F63B78 : c >>> 1;
            }
            LENGTH_TABLES[b] = c;
        }
        for (int k = 1; k < 4; k++) {
            for (int b = 0; b < 256; b++) {
                int prev = LENGTH_TABLES[(k - 1) << 8 | b];
                LENGTH_TABLES[k << 8 | b] = (prev >>> 8) ^ LENGTH_TABLES[prev & 0xFF];
            }
        }
    }

    private RecordCheck() {
    }

    public static String describe(int code) {
        switch (code) {
            case VALID: return "valid";
            case END: return "zero length word (end of log)";
            case BAD_LENGTH: return "impossible length";
            case BAD_FLAGS: return "unknown flags or non-zero reserved bits";
            case BAD_PREV: return "previous-record link does not match";
            case BAD_CRC: return "CRC-32C mismatch";
            default: return "unknown check result " + code;
        }
    }

    /**
     * Checks the record at {@code offset} of a segment, through a little-endian view of the whole segment.
     * Plain loads suffice: callers either own the segment (recovery, tools) or read below a position they
     * loaded with volatile semantics after the record was published (readers).
     *
     * @param startLsn     the segment's start LSN
     * @param expectedPrev the LSN the record's prev link must hold, or -1 to accept any link that points
     *                     below the record (only for the first record a scan meets)
     * @param view a view of the whole segment owned by the caller (position and limit are changed)
     */
    public static int check(ByteBuffer view, long startLsn, CRC32C crc, long offset, long expectedPrev) {
        int o = (int) offset;
        int length = view.getInt(o + RecordDescriptor.LENGTH_OFFSET);
        if (length == 0) {
            return END;
        }
        // Bounded by the segment, not by the configured maximum payload: a log written with a larger
        // maximum must still open after the setting is lowered.
        long end = offset + RecordDescriptor.aligned(length);
        // The fit rule (docs/format.md): a record ends exactly at the segment's end (a closing record) or leaves
        // room for one more header; anything else was not written by Walden and would break the walk after it.
        if (length < RecordDescriptor.HEADER_LENGTH
                || (end != view.capacity() && end + RecordDescriptor.HEADER_LENGTH > view.capacity())) {
            return BAD_LENGTH;
        }
        int flags = view.getShort(o + RecordDescriptor.FLAGS_OFFSET) & 0xFFFF;
        int untimed = flags & ~RecordDescriptor.FLAG_TIME;
        if ((flags & ~RecordDescriptor.KNOWN_FLAGS) != 0 || (flags & RecordDescriptor.CODEC_MASK) == RecordDescriptor.CODEC_MASK
                || ((flags & RecordDescriptor.FLAG_CONTROL) != 0 && untimed != RecordDescriptor.FLAG_CONTROL)
                || ((flags & RecordDescriptor.FLAG_PADDING) != 0 && flags != RecordDescriptor.FLAG_PADDING)
                || view.getInt(o + RecordDescriptor.RESERVED_OFFSET) != 0) {
            return BAD_FLAGS;
        }
        int payloadOffset = RecordDescriptor.payloadOffset(flags);
        if (length < payloadOffset) {
            return BAD_LENGTH; // a record with a time has room for it
        }
        if ((flags & RecordDescriptor.CODEC_MASK) != 0 && length < payloadOffset + RecordDescriptor.COMPRESSED_PREFIX) {
            return BAD_LENGTH; // a compressed payload starts with its uncompressed length
        }
        long prev = view.getLong(o + RecordDescriptor.PREV_OFFSET);
        long lsn = startLsn + offset;
        if (expectedPrev >= 0 ? prev != expectedPrev : (prev >= lsn || prev < 0)) {
            return BAD_PREV;
        }
        if (view.getInt(o + RecordDescriptor.CRC_OFFSET) != crc(view, crc, offset, length)) {
            return BAD_CRC;
        }
        return VALID;
    }

    /**
     * CRC-32C of bytes {@code [offset + 8, offset + length)} of the view, then the length's 4 LE bytes.
     * Leaves the view's position at 0 and its limit at its capacity.
     */
    public static int crc(ByteBuffer view, CRC32C crc, long offset, int length) {
        crc.reset();
        int start = (int) offset;
        view.limit(start + length).position(start + RecordDescriptor.CRC_COVERAGE_OFFSET);
        crc.update(view);
        view.clear(); // absolute reads elsewhere are checked against the limit: leave the whole segment readable
        return withLength((int) crc.getValue(), length);
    }

    /**
     * {@code crc} (a CRC-32C's value) continued over the four little-endian bytes of {@code length}, as four calls of
     * {@link CRC32C#update(int)} would, but by slicing by four: four table loads that do not wait for one another, where
     * the byte-at-a-time steps are a chain of four dependent loads, on every append's path.
     */
    static int withLength(int crc, int length) {
        int s = ~crc ^ length;
        return ~(LENGTH_TABLES[3 << 8 | s & 0xFF] ^ LENGTH_TABLES[2 << 8 | (s >>> 8) & 0xFF]
                ^ LENGTH_TABLES[1 << 8 | (s >>> 16) & 0xFF] ^ LENGTH_TABLES[s >>> 24]);
    }
}
