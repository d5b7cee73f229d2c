package io.walden.core;

/**
 * A commit at a remote level ({@code REMOTE_WRITE}, {@code ON}, {@code REMOTE_APPLY}) could not be confirmed by the
 * synchronous replicas: the record IS durable locally (its local flush completed) and stays in the log, but no
 * replica promised it at the level asked for (PostgreSQL's "already committed locally, but might not have been
 * replicated"). Never a success in disguise: a commit is acknowledged only at a level that held.
 *
 * <p>Raised when replication stops while the commit waits (the server is shutting down, the replication endpoint
 * closed, the log closed), and, as its subclass {@link RemoteCommitTimeoutException}, when the wait timed out.
 */
public class RemoteCommitUnconfirmedException extends WalException {
    private static final long serialVersionUID = 1L;
    private final long lsn;

    public RemoteCommitUnconfirmedException(String message, long lsn) {
        super(message);
        this.lsn = lsn;
    }

    /** The record's LSN: durable locally. */
    public long lsn() {
        return lsn;
    }
}
