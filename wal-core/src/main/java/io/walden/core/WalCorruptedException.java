package io.walden.core;

import java.nio.file.Path;

/**
 * Data that was once durable fails validation: a record below the last recorded flush point, a segment
 * header that does not check out, or a segment of another log. Never raised for a torn tail (a crash in
 * the middle of unflushed writes), which recovery repairs on its own.
 */
public class WalCorruptedException extends WalException {
    private static final long serialVersionUID = 1L;
    private final long lsn;
    private final transient Path segment;

    public WalCorruptedException(String message, long lsn, Path segment) {
        super(message);
        this.lsn = lsn;
        this.segment = segment;
    }

    /** The LSN of the first bad byte or record, or {@link Lsn#INVALID} when not about one position. */
    public long lsn() {
        return lsn;
    }

    /** The segment file at fault, or null. */
    public Path segment() {
        return segment;
    }
}
