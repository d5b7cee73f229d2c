package io.walden.core;

/** An LSN that is not usable for the request: not a record boundary, or beyond the end of the log. */
public class IllegalLsnException extends WalException {
    private static final long serialVersionUID = 1L;

    public IllegalLsnException(String message) {
        super(message);
    }
}
