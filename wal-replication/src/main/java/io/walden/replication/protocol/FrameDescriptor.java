package io.walden.replication.protocol;

/**
 * Layout of a replication frame, as specified in {@code docs/replication-protocol.md}. Big-endian.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |              frame length: bytes after this field             |
 *  +---------------+-----------------------------------------------+
 *  |     type      |  body ...                                      |
 *  +---------------+                                               |
 * </pre>
 */
public final class FrameDescriptor {
    public static final int LENGTH_FIELD_LENGTH = Integer.BYTES;
    public static final int TYPE_LENGTH = 1;
    /**
     * 2: the hello carries the epoch's start LSN and the welcome the epoch history. 3: the welcome carries the
     * primary's oldest kept LSN, and a hello with log id 0 is answered with a welcome and a close. 4: data may be
     * shipped before the primary flushed it (a replica applies nothing beyond the primary's flushed LSN, which data
     * frames and keepalives carry), and a replica whose log runs past its epoch's end in the primary's history is
     * answered with a welcome and a close, and rewinds. 5: the primary tells its replicas how far its archive holds
     * the log (the Archived frame), and they keep every segment the archive lacks.
     */
    public static final int PROTOCOL_VERSION = 5;
    /**
     * 6: every log of a store over one connection (docs/replication-protocol.md, "Version 6"). A version 6 primary
     * answers a version 5 hello too, for the log {@code default} only.
     */
    public static final int STORE_PROTOCOL_VERSION = 6;

    public static final byte HELLO = 'H';
    public static final byte WELCOME = 'W';
    public static final byte ERROR = 'E';
    public static final byte DATA = 'w';
    public static final byte KEEPALIVE = 'k';
    public static final byte STATUS = 'r';
    public static final byte ARCHIVED = 'a';
    public static final byte CATALOG_ENTRY = 'C';
    public static final byte CATALOG_DROP = 'D';
    public static final byte CATALOG_COMPLETE = 'F';
    public static final byte ON_LOG = 'L';
    public static final byte START = 'S';
    public static final byte RESTART = 'Z';
    public static final byte END = 'X';

    /** The root log's name and number in a version 6 catalog: always listed, first. */
    public static final String DEFAULT_LOG = "default";
    public static final int DEFAULT_LOG_NUMBER = 0;
    /** The On log envelope after the frame length: its type byte and the log number. */
    public static final int ON_LOG_HEADER_LENGTH = TYPE_LENGTH + Integer.BYTES;
    /** How far a log's sender may run ahead of what the replica reported written for that log (version 6 flow control). */
    public static final long STREAM_WINDOW = 8L << 20;
    public static final int MAX_LOG_NAME_BYTES = 128;
    public static final int MAX_SETTINGS = 64;
    public static final int MAX_SETTING_BYTES = 1024;

    /** The Archived frame's floor when the primary keeps no archive (2^63 - 1: every LSN is below it). */
    public static final long NO_ARCHIVE = Long.MAX_VALUE;

    /** Data frame header after the type: data start LSN, primary's flushed LSN, send time. */
    public static final int DATA_HEADER_LENGTH = 3 * Long.BYTES;
    /** Default receive limit: one largest record (16 MiB payload plus its header) and the data header, with room. */
    public static final int DEFAULT_MAX_FRAME_LENGTH = (16 << 20) + (64 << 10);
    /**
     * Receive limit before the handshake is done, and always on a primary (replicas send only hellos, statuses and
     * errors): the largest hello (~1.2 KiB), welcome (a 4096-entry history: ~49 KiB) or error fits, with room.
     */
    public static final int HANDSHAKE_MAX_FRAME_LENGTH = 64 << 10;

    /**
     * A replica's receive limit once welcomed: a data frame holds whole records of one segment, so no frame of a log
     * with {@code segmentSize}-byte segments needs more than the segment plus the data header.
     */
    public static int dataFrameLimit(long segmentSize) {
        return (int) Math.min(Integer.MAX_VALUE - 1024, Math.max(DEFAULT_MAX_FRAME_LENGTH,
                segmentSize + TYPE_LENGTH + DATA_HEADER_LENGTH + 1024));
    }

    public static final int MAX_NAME_BYTES = 64;
    public static final int MAX_SECRET_BYTES = 1024;
    public static final int MAX_MESSAGE_BYTES = 4096;
    /** The most epochs a Welcome may carry. */
    public static final int MAX_HISTORY_ENTRIES = 4096;

    private FrameDescriptor() {
    }
}
