package io.walden.core;

import java.nio.ByteBuffer;

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
    private final ByteBuffer view;

    /** A record as the log's readers hand it out: {@code view} is its payload, valid while the log is open. */
    public WalRecord(long lsn, long nextLsn, int type, ByteBuffer view) {
        this.lsn = lsn;
        this.nextLsn = nextLsn;
        this.type = type;
        this.view = view;
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
        return "WalRecord{lsn=" + Lsn.format(lsn) + ", type=" + type + ", size=" + size() + "}";
    }
}
