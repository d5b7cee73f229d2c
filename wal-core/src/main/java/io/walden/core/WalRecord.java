package io.walden.core;

import java.nio.ByteBuffer;
import java.time.Instant;

/**
 * One record read from the log.
 *
 * <p>{@link #payloadView()} is a zero-copy, read-only view straight into the mapped segment (for a record stored
 * compressed, into the reader's buffer that holds the restored payload); it is valid only until the next call on
 * the {@link WalReader} that returned this record (or its close), after which the segment may be unmapped. {@link #payload()} returns a copy that is valid forever.
 *
 * <p>Thread-safety: immutable, but the view follows the reader's rule above.
 */
public final class WalRecord {
    private final long lsn;
    private final long nextLsn;
    private final int type;
    /** Microseconds since the epoch (UTC), or {@link Long#MIN_VALUE}: none. */
    private final long timeMicros;
    private final ByteBuffer view;

    /**
     * A record as the log's readers hand it out: {@code view} is its payload, valid while the log is open.
     *
     * @param timeMicros its time in microseconds since the epoch (UTC), or {@link Long#MIN_VALUE} when it carries none
     */
    public WalRecord(long lsn, long nextLsn, int type, long timeMicros, ByteBuffer view) {
        this.lsn = lsn;
        this.nextLsn = nextLsn;
        this.type = type;
        this.timeMicros = timeMicros;
        this.view = view;
    }

    /** A record without a time (format 1). */
    public WalRecord(long lsn, long nextLsn, int type, ByteBuffer view) {
        this(lsn, nextLsn, type, Long.MIN_VALUE, view);
    }

    public long lsn() {
        return lsn;
    }

    /** The position right after this record: where a reader resumes to read the records after it. */
    public long nextLsn() {
        return nextLsn;
    }

    /** The user-defined type tag (0 to 65535); 0 for plain appends. */
    public int type() {
        return type;
    }

    /**
     * When the primary appended it: its wall clock (UTC) to the microsecond, stored in the record, replicated, archived
     * and restored with it (docs/format.md, "Records"). Never less than an earlier record's, even when the clock
     * stepped back. A busy log reads the clock about once a millisecond, so records appended within the same
     * millisecond may share a time. Null for a record written before format 2 (which had no times).
     */
    public Instant timestamp() {
        return timeMicros == Long.MIN_VALUE ? null : RecordTime.ofMicros(timeMicros);
    }

    /** {@link #timestamp()} in microseconds since the epoch, without an allocation; {@link Long#MIN_VALUE}: none. */
    public long timeMicros() {
        return timeMicros;
    }

    public int size() {
        return view.remaining();
    }

    /** A copy of the payload. */
    public byte[] payload() {
        byte[] out = new byte[view.remaining()];
        view.duplicate().get(out);
        return out;
    }

    /** A read-only view of the payload in the mapped segment, little-endian; see the class comment for its lifetime. */
    public ByteBuffer payloadView() {
        return view.duplicate().order(view.order());
    }

    @Override
    public String toString() {
        return "WalRecord{lsn=" + Lsn.format(lsn) + ", type=" + type + ", size=" + size()
                + (timeMicros == Long.MIN_VALUE ? "" : ", time=" + RecordTime.format(timestamp())) + "}";
    }
}
