package io.walden.core;

/** Local appends are refused by the log's owner, e.g. because this log is a replica (the message names its primary). */
public class AppendsRefusedException extends WalException {
    private static final long serialVersionUID = 1L;

    public AppendsRefusedException(String message) {
        super(message);
    }
}
