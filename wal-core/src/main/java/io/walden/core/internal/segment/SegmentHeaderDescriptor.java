package io.walden.core.internal.segment;

import io.walden.core.Lsn;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * Layout of the 64-byte header at the start of every segment file, as specified in
 * {@code docs/format.md} ("Segment header"). All integers are little-endian.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                     magic "WALDENSG" (8)                      |  0
 *  +-------------------------------+-------------------------------+
 *  |        format version         |        header length (64)     |  8
 *  +-------------------------------+-------------------------------+
 *  |                       segment size (8)                        | 16
 *  +---------------------------------------------------------------+
 *  |                  start LSN of this segment (8)                | 24
 *  +---------------------------------------------------------------+
 *  |                         log id (8)                            | 32
 *  +---------------------------------------------------------------+
 *  |                    reserved, zero (20)                        | 40
 *  +-------------------------------+-------------------------------+
 *  |             ...               |  CRC-32C of bytes 0..59       | 56
 *  +-------------------------------+-------------------------------+
 * </pre>
 *
 * The first record of a segment starts right after the header, at {@code startLsn + LENGTH}.
 */
public final class SegmentHeaderDescriptor {
    /** "WALDENSG" read as a little-endian long. */
    public static final long MAGIC = 0x47534E45444C4157L;
    /**
     * The format new segments are written in: 2, whose records carry their time (FLAG_TIME, docs/format.md). Segments
     * of format 1 are read as they are: their records have no time, and the one a format-1 log was writing when it was
     * opened by this version goes on with timed records (a record says itself whether it has a time).
     */
    public static final int FORMAT_VERSION = 2;
    /** The oldest format this version reads. */
    public static final int OLDEST_READABLE_VERSION = 1;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = MAGIC_OFFSET + Long.BYTES;
    public static final int HEADER_LENGTH_OFFSET = VERSION_OFFSET + Integer.BYTES;
    public static final int SEGMENT_SIZE_OFFSET = HEADER_LENGTH_OFFSET + Integer.BYTES;
    public static final int START_LSN_OFFSET = SEGMENT_SIZE_OFFSET + Long.BYTES;
    public static final int LOG_ID_OFFSET = START_LSN_OFFSET + Long.BYTES;
    public static final int RESERVED_OFFSET = LOG_ID_OFFSET + Long.BYTES;
    public static final int CRC_OFFSET = 60;
    /** Header length; also the offset of a segment's first record. A multiple of the record alignment. */
    public static final int LENGTH = CRC_OFFSET + Integer.BYTES;

    private SegmentHeaderDescriptor() {
    }

    /** Encodes a header into a new 64-byte little-endian buffer, positioned at 0. */
    public static ByteBuffer encode(long segmentSize, long startLsn, long logId) {
        ByteBuffer b = ByteBuffer.allocate(LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(MAGIC_OFFSET, MAGIC)
                .putInt(VERSION_OFFSET, FORMAT_VERSION)
                .putInt(HEADER_LENGTH_OFFSET, LENGTH)
                .putLong(SEGMENT_SIZE_OFFSET, segmentSize)
                .putLong(START_LSN_OFFSET, startLsn)
                .putLong(LOG_ID_OFFSET, logId);
        b.putInt(CRC_OFFSET, crc(b));
        return b;
    }

    /**
     * Checks a header read from disk against what the log expects.
     *
     * @param header the first {@link #LENGTH} bytes of the file, little-endian, absolute reads only
     * @param logId  the expected log id, or 0 to accept any (when the log id is not known yet)
     * @return null when the header is valid, else a sentence saying what is wrong
     */
    public static String validate(ByteBuffer header, long segmentSize, long startLsn, long logId) {
        if (header.limit() < LENGTH) {
            return "file is shorter than a segment header";
        }
        if (header.getLong(MAGIC_OFFSET) != MAGIC) {
            return "bad magic (not a Walden segment)";
        }
        if (header.getInt(CRC_OFFSET) != crc(header)) {
            return "segment header CRC mismatch";
        }
        int version = header.getInt(VERSION_OFFSET);
        if (version < OLDEST_READABLE_VERSION || version > FORMAT_VERSION) {
            return "unsupported segment format version " + version + " (this build reads " + OLDEST_READABLE_VERSION
                    + " to " + FORMAT_VERSION + ")";
        }
        if (header.getInt(HEADER_LENGTH_OFFSET) != LENGTH) {
            return "unexpected header length " + header.getInt(HEADER_LENGTH_OFFSET);
        }
        if (header.getLong(SEGMENT_SIZE_OFFSET) != segmentSize) {
            return "segment size " + header.getLong(SEGMENT_SIZE_OFFSET) + " differs from the log's " + segmentSize;
        }
        if (header.getLong(START_LSN_OFFSET) != startLsn) {
            return "header start LSN " + Lsn.format(header.getLong(START_LSN_OFFSET))
                    + " does not match the file name's " + Lsn.format(startLsn);
        }
        if (logId != 0 && header.getLong(LOG_ID_OFFSET) != logId) {
            return "segment belongs to another log (log id " + Long.toHexString(header.getLong(LOG_ID_OFFSET))
                    + ", this log is " + Long.toHexString(logId) + ")";
        }
        return null;
    }

    private static int crc(ByteBuffer header) {
        CRC32C crc = new CRC32C();
        crc.update(header.duplicate().position(0).limit(CRC_OFFSET));
        return (int) crc.getValue();
    }
}
