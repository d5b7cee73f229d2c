package io.walden.core;

/**
 * A commit at a remote level ({@code REMOTE_WRITE}, {@code ON}, {@code REMOTE_APPLY}) waited longer than the
 * configured remote commit timeout for the synchronous replicas. The record IS durable locally (its local
 * flush completed) and stays in the log; only the replicas' confirmation is missing (PostgreSQL's "already
 * committed locally, but might not have been replicated").
 */
public class RemoteCommitTimeoutException extends RemoteCommitUnconfirmedException {
    private static final long serialVersionUID = 1L;

    public RemoteCommitTimeoutException(String message, long lsn) {
        super(message, lsn);
    }
}
