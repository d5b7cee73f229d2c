package io.walden.core;

/**
 * Base of every error Walden reports. Unchecked, so that the append path stays free of checked-exception
 * plumbing; each subclass names one situation and its message says what happened and what to do.
 */
public class WalException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public WalException(String message) {
        super(message);
    }

    public WalException(String message, Throwable cause) {
        super(message, cause);
    }
}
