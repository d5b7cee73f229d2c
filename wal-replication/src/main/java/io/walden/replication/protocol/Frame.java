package io.walden.replication.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.util.ReferenceCounted;
import io.walden.core.EpochHistory;

/**
 * The frames of the replication protocol (docs/replication-protocol.md). All but {@link Data} are plain values;
 * a {@link Data} frame holds a reference-counted slice of the received buffer, which its consumer releases.
 */
public sealed interface Frame permits Frame.Hello, Frame.Welcome, Frame.Error, Frame.Data, Frame.Keepalive, Frame.Status,
        Frame.Archived {

    /**
     * Replica → primary, first frame: who I am, which epoch (number and start) wrote my last record, and where my
     * log ends. {@code logId} 0 only asks who the primary is (a new replica, before it creates its log): the primary
     * answers with a Welcome and closes the connection.
     */
    record Hello(int version, long logId, int epoch, long epochStartLsn, long startLsn, String name, byte[] secret)
            implements Frame {
    }

    /**
     * Primary → replica: accepted; its epoch history follows (to be adopted), then data from the replica's start LSN.
     * {@code oldestLsn} is the first record the primary still keeps: where a new replica's log begins.
     */
    record Welcome(int version, long logId, long segmentSize, int epoch, long flushedLsn, long oldestLsn,
                   EpochHistory history) implements Frame {
    }

    /** Either way: why the connection ends (the sender closes it after this frame). */
    record Error(int code, String message) implements Frame {
        public static final int UNSUPPORTED_VERSION = 1;
        public static final int ANOTHER_LOG = 2;
        public static final int LSN_REMOVED = 3;
        public static final int EPOCH_DIVERGED = 4;
        public static final int AUTHENTICATION_FAILED = 5;
        public static final int NOT_A_PRIMARY = 6;
        public static final int MALFORMED = 7;
        /** The primary serves as many replicas (or keeps as many slots) as it allows: retry later, or drop a slot. */
        public static final int TOO_MANY_REPLICAS = 8;

        /** Whether the replica stops reconnecting on this error ({@link ErrorCode#isFinal()}; unknown codes are not). */
        public boolean isFinal() {
            ErrorCode c = ErrorCode.of(code);
            return c != null && c.isFinal();
        }
    }

    /** Primary → replica: flushed log bytes from {@code startLsn}: whole records within one segment. */
    record Data(long startLsn, long flushedLsn, long sendTimeMicros, ByteBuf bytes) implements Frame, ReferenceCounted {
        public long endLsn() {
            return startLsn + bytes.readableBytes();
        }

        @Override
        public int refCnt() {
            return bytes.refCnt();
        }

        @Override
        public Data retain() {
            bytes.retain();
            return this;
        }

        @Override
        public Data retain(int increment) {
            bytes.retain(increment);
            return this;
        }

        @Override
        public Data touch() {
            bytes.touch();
            return this;
        }

        @Override
        public Data touch(Object hint) {
            bytes.touch(hint);
            return this;
        }

        @Override
        public boolean release() {
            return bytes.release();
        }

        @Override
        public boolean release(int decrement) {
            return bytes.release(decrement);
        }
    }

    /** Primary → replica when idle: its flushed end; {@code replyRequested} asks for a Status at once. */
    record Keepalive(long flushedLsn, long sendTimeMicros, boolean replyRequested) implements Frame {
    }

    /**
     * Primary → replica, after the Welcome and whenever it moves: every segment that begins below {@code floorLsn} is in
     * the group's archive (or was given up under drop-archive); {@link FrameDescriptor#NO_ARCHIVE}: the primary keeps
     * no archive. The replica keeps every segment from there on (docs/replication.md, "Retention and the archive").
     */
    record Archived(long floorLsn) implements Frame {
    }

    /** Replica → primary: how far it has written, flushed and applied (PostgreSQL's standby status update). */
    record Status(long writtenLsn, long flushedLsn, long appliedLsn, long sendTimeMicros, boolean replyRequested)
            implements Frame {
    }
}
