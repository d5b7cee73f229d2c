package io.walden.core;

/** The {@link Wal} (or reader) was closed; appends and reads are refused. */
public class WalClosedException extends WalException {
    private static final long serialVersionUID = 1L;

    public WalClosedException(String message) {
        super(message);
    }
}
