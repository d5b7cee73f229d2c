package io.walden.core;

/** Another process (or another {@link Wal} in this one) holds the log directory. */
public class WalLockedException extends WalException {
    private static final long serialVersionUID = 1L;

    public WalLockedException(String message) {
        super(message);
    }
}
