package io.walden.core.record;

import io.walden.core.segment.Segment;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Validates a record in place and computes record CRCs. Results are small int codes, not exceptions:
 * recovery meets invalid records as a matter of course (every log ends at one).
 *
 * <p>Order of checks (PostgreSQL's rule: bound the length before trusting anything, trust nothing before
 * the CRC passes): length word, fits in the segment, flags and reserved bits, previous-record link, CRC.
 *
 * <p>Thread-safety: stateless; the {@link CRC32C} and view passed in belong to the calling thread.
 */
public final class RecordCheck {
    public static final int VALID = 0;
    /** Length word is zero: no record here (the normal end of a log). */
    public static final int END = 1;
    public static final int BAD_LENGTH = 2;
    public static final int BAD_FLAGS = 3;
    public static final int BAD_PREV = 4;
    public static final int BAD_CRC = 5;

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
     * Checks the record at {@code offset} of {@code segment}.
     *
     * @param expectedPrev the LSN the record's prev link must hold, or -1 to accept any link that points
     *                     below the record (only for the first record a scan meets)
     * @param view a view of the same segment owned by the caller (position and limit are changed)
     */
    public static int check(Segment segment, ByteBuffer view, CRC32C crc, long offset, long expectedPrev) {
        int length = segment.readIntAcquire(offset + RecordDescriptor.LENGTH_OFFSET);
        if (length == 0) {
            return END;
        }
        // Bounded by the segment, not by the configured maximum payload: a log written with a larger
        // maximum must still open after the setting is lowered.
        if (length < RecordDescriptor.HEADER_LENGTH || offset + RecordDescriptor.aligned(length) > segment.size()) {
            return BAD_LENGTH;
        }
        int flags = segment.readShort(offset + RecordDescriptor.FLAGS_OFFSET) & 0xFFFF;
        if ((flags & ~RecordDescriptor.KNOWN_FLAGS) != 0 || segment.readInt(offset + RecordDescriptor.RESERVED_OFFSET) != 0) {
            return BAD_FLAGS;
        }
        long prev = segment.readLong(offset + RecordDescriptor.PREV_OFFSET);
        long lsn = segment.startLsn() + offset;
        if (expectedPrev >= 0 ? prev != expectedPrev : (prev >= lsn || prev < 0)) {
            return BAD_PREV;
        }
        if (segment.readInt(offset + RecordDescriptor.CRC_OFFSET) != crc(view, crc, offset, length)) {
            return BAD_CRC;
        }
        return VALID;
    }

    /** CRC-32C of bytes {@code [offset + 8, offset + length)} of the view, then the length's 4 LE bytes. */
    public static int crc(ByteBuffer view, CRC32C crc, long offset, int length) {
        crc.reset();
        int start = (int) offset;
        view.limit(start + length).position(start + RecordDescriptor.CRC_COVERAGE_OFFSET);
        crc.update(view);
        crc.update(length);
        crc.update(length >>> 8);
        crc.update(length >>> 16);
        crc.update(length >>> 24);
        return (int) crc.getValue();
    }
}
