package io.walden.replication.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.util.ReferenceCounted;
import io.walden.core.EpochHistory;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The frames of the replication protocol (docs/replication-protocol.md). All but {@link Data} are plain values;
 * a {@link Data} frame holds a reference-counted slice of the received buffer, which its consumer releases.
 */
public sealed interface Frame permits Frame.Hello, Frame.Welcome, Frame.Error, Frame.Data, Frame.Keepalive, Frame.Status,
        Frame.Archived, Frame.StoreHello, Frame.CatalogEntry, Frame.CatalogDrop, Frame.CatalogComplete, Frame.OnLog,
        Frame.Start, Frame.Restart, Frame.End {

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

    /**
     * Replica → primary, first frame of a version 6 connection (every log of a store): who I am. The logs follow, each
     * started by a {@link Start} once the primary's catalog has named it.
     */
    record StoreHello(int version, String name, byte[] secret) implements Frame {
    }

    /**
     * Primary → replica (version 6): log number {@code log} on this connection is the log {@code name}, of that id and
     * segment size, with these settings (the user's names and values as text). Sent again with the same number and log id
     * when the settings change.
     */
    record CatalogEntry(int log, long logId, long segmentSize, String name, Map<String, String> settings) implements Frame {
        public CatalogEntry {
            settings = Collections.unmodifiableMap(new LinkedHashMap<>(settings));
        }
    }

    /** Primary → replica (version 6): log number {@code log} was deleted on the primary; the replica deletes its copy. */
    record CatalogDrop(int log) implements Frame {
    }

    /**
     * Primary → replica (version 6): the catalog listed at the start of the connection is complete, and holds
     * {@code count} logs: a named log the replica holds that it did not list was deleted on the primary.
     */
    record CatalogComplete(int count) implements Frame {
    }

    /**
     * Either way (version 6): a per-log frame ({@link Start}, {@link Restart}, Welcome, Error, Data, Keepalive, Archived,
     * Status) about log number {@code log}. Reference-counted through a Data frame it holds.
     */
    record OnLog(int log, Frame frame) implements Frame, ReferenceCounted {
        @Override
        public int refCnt() {
            return frame instanceof Data d ? d.refCnt() : 1;
        }

        @Override
        public OnLog retain() {
            return retain(1);
        }

        @Override
        public OnLog retain(int increment) {
            if (frame instanceof Data d) {
                d.retain(increment);
            }
            return this;
        }

        @Override
        public OnLog touch() {
            return this;
        }

        @Override
        public OnLog touch(Object hint) {
            return this;
        }

        @Override
        public boolean release() {
            return release(1);
        }

        @Override
        public boolean release(int decrement) {
            return frame instanceof Data d && d.release(decrement);
        }
    }

    /**
     * Replica → primary, inside {@link OnLog}: version 5's hello for one log (the name and secret are the connection's):
     * log id 0 asks for the log's identity.
     */
    record Start(long logId, int epoch, long epochStartLsn, long startLsn) implements Frame {
    }

    /**
     * Primary → replica, inside {@link OnLog}: this log's stream ended without an error (after an identity answer or a
     * rewind, a changed history, a log closed here); the replica sends a new {@link Start} when it is ready.
     */
    record Restart() implements Frame {
    }

    /**
     * Replica → primary, inside {@link OnLog}: this replica no longer follows this log on this connection (a replica of
     * chosen logs let it go): the primary ends the log's stream there, as if that log alone had disconnected. Its slot
     * stays. Sent only by a replica of chosen logs (docs/replication-protocol.md, "A replica of chosen logs").
     */
    record End() implements Frame {
    }
}
