package io.walden.core;

/**
 * A force (fsync) failed, so the log refuses every further append until it is reopened. A failed force
 * is never retried as if nothing happened: the kernel may already have dropped the dirty pages, so a later
 * "successful" force proves nothing (PostgreSQL's 2018 fsync lesson). Reopening runs recovery from what is
 * actually on disk.
 */
public class WalFailedException extends WalException {
    private static final long serialVersionUID = 1L;

    public WalFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
