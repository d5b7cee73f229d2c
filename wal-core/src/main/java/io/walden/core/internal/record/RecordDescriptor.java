package io.walden.core.internal.record;

/**
 * Layout of a record, as specified in {@code docs/format.md} ("Record"). Little-endian.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-------------------------------+-------------------------------+
 *  |  total length (header+payload)|           CRC-32C             |  0
 *  +-------------------------------+-------------------------------+
 *  |               LSN of the previous record (xl_prev)            |  8
 *  +---------------+---------------+-------------------------------+
 *  |  type (u16)   |  flags (u16)  |        reserved, zero         | 16
 *  +---------------+---------------+-------------------------------+
 *  |   time: µs since 1970-01-01 UTC (only with FLAG_TIME; format 2) | 24
 *  +---------------------------------------------------------------+
 *  |                    payload ...  then zero padding             | 32 (24 without FLAG_TIME)
 *  |                    to the next multiple of 8                  |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <p>Format 2 added the time: every record Walden appends carries {@link #FLAG_TIME} and its primary's append time in
 * the 8 bytes after the header, so the payload starts at {@link #TIMED_HEADER_LENGTH}. Records of format 1 (no flag)
 * and padding records have none: their payload starts at {@link #HEADER_LENGTH}, which stays the smallest record and
 * the room the fit rule keeps. So one walk reads both formats, record by record ({@link #payloadOffset}).
 *
 * <ul>
 *   <li>The length word is written last, with release semantics: a reader that loads a positive length
 *       with acquire semantics sees the whole record. Zero means "no record (yet)".</li>
 *   <li>The CRC-32C covers bytes {@code [8, length)} of the record, then the four little-endian bytes
 *       of the length word: everything but itself, so the previous-record link is protected.</li>
 *   <li>Records start at multiples of {@link #ALIGNMENT} and never span segments. Every segment keeps
 *       room for at least one header after its last record, where a {@link #FLAG_PADDING} record closes
 *       it; so a record fits at {@code p} only if {@code p + aligned(length) + HEADER_LENGTH <= segment end}.</li>
 * </ul>
 */
public final class RecordDescriptor {
    public static final int LENGTH_OFFSET = 0;
    public static final int CRC_OFFSET = LENGTH_OFFSET + Integer.BYTES;
    public static final int PREV_OFFSET = CRC_OFFSET + Integer.BYTES;
    public static final int TYPE_OFFSET = PREV_OFFSET + Long.BYTES;
    public static final int FLAGS_OFFSET = TYPE_OFFSET + Short.BYTES;
    public static final int RESERVED_OFFSET = FLAGS_OFFSET + Short.BYTES;
    /** The smallest record: the header of a padding record or of a format-1 record (no time). */
    public static final int HEADER_LENGTH = RESERVED_OFFSET + Integer.BYTES;
    /** With {@link #FLAG_TIME}: the record's time, microseconds since the epoch (UTC), right after the header. */
    public static final int TIME_OFFSET = HEADER_LENGTH;
    /** The header of a record that carries its time: where its payload starts. Every record Walden appends has it. */
    public static final int TIMED_HEADER_LENGTH = TIME_OFFSET + Long.BYTES;
    /** Where the CRC's coverage starts. */
    public static final int CRC_COVERAGE_OFFSET = PREV_OFFSET;

    public static final int ALIGNMENT = 8;

    /** A record with no payload for readers: closes a segment, or fills an aborted claim. */
    public static final int FLAG_PADDING = 1;
    /**
     * Bits 1-2: the codec of a compressed payload (docs/format.md, "Compressed payloads"): 0 none, {@link #CODEC_LZ4},
     * {@link #CODEC_ZSTD}; 3 is invalid. A compressed payload starts with its uncompressed length (u32).
     */
    public static final int CODEC_MASK = 0b110;
    public static final int CODEC_LZ4 = 0b010;
    public static final int CODEC_ZSTD = 0b100;
    /** The uncompressed length that starts a compressed payload. */
    public static final int COMPRESSED_PREFIX = Integer.BYTES;
    /**
     * A record of the log's own (docs/format.md, "Control records": cursor changes): replicated and recovered like any
     * other, never handed to readers. Never combined with another flag.
     */
    public static final int FLAG_CONTROL = 0b1000;
    /**
     * Bit 4 (format 2): the record carries its time at {@link #TIME_OFFSET}, and its payload starts at
     * {@link #TIMED_HEADER_LENGTH}. Never on a padding record; combines with a codec or {@link #FLAG_CONTROL}.
     */
    public static final int FLAG_TIME = 0b1_0000;
    /** Every flag this format version knows; a record with another bit set is invalid. */
    public static final int KNOWN_FLAGS = FLAG_PADDING | CODEC_MASK | FLAG_CONTROL | FLAG_TIME;

    public static final int MAX_TYPE = 0xFFFF;

    private RecordDescriptor() {
    }

    /** Bytes a record of {@code length} (header + payload) occupies in the segment. */
    public static long aligned(long length) {
        return (length + (ALIGNMENT - 1)) & ~(long) (ALIGNMENT - 1);
    }

    /** The length (header, time and payload) of a record Walden appends with {@code payloadLength} bytes of payload. */
    public static int recordLength(int payloadLength) {
        return TIMED_HEADER_LENGTH + payloadLength;
    }

    /** Where the payload of a record with {@code flags} starts: after its time when it carries one. */
    public static int payloadOffset(int flags) {
        return (flags & FLAG_TIME) != 0 ? TIMED_HEADER_LENGTH : HEADER_LENGTH;
    }
}
