package io.walden.core;

/** A read asked for an LSN below {@link Wal#oldestLsn()}: the segment holding it was truncated away. */
public class LsnRemovedException extends WalException {
    private static final long serialVersionUID = 1L;
    private final long requested;
    private final long oldest;

    public LsnRemovedException(long requested, long oldest) {
        super("requested LSN " + Lsn.format(requested) + " has already been removed; the oldest kept LSN is "
                + Lsn.format(oldest));
        this.requested = requested;
        this.oldest = oldest;
    }

    public long requested() {
        return requested;
    }

    public long oldest() {
        return oldest;
    }
}
