package io.walden.core.internal.commit;

import io.walden.core.AppendCompletion;
import io.walden.core.Durability;

/**
 * One {@link AppendCompletion}'s wait for its append's durability level: the node queued for the local flush
 * ({@link GroupCommit#awaitFlushedAsync}) and then, where the level and a synchronous policy ask for it, for the
 * replicas' confirmation ({@link RemoteWaits#confirm}). Made once with its completion and reused with it, so that an
 * append told through a completion allocates nothing; this is where such an append's level is interpreted, as
 * {@link RemoteWaits} does for blocking appends and futures.
 *
 * <p>Ownership: {@link #prepare} is called by the appending thread before the node is queued (the queue's push
 * publishes it); {@link #complete} and {@link #fail} by the one thread that tells it, at a time.
 */
public final class AppendWait extends Completion {
    private final AppendCompletion owner;
    private Durability level;
    private RemoteWaits remote;
    private boolean awaitingReplicas;
    /** When the append began (RemoteWaits.clockFor): a remote level's timeout counts from it. */
    private long since;

    public AppendWait(AppendCompletion owner) {
        this.owner = owner;
    }

    /** Set by the write path before it queues this wait for a record at {@code level}. */
    public void prepare(Durability level, RemoteWaits remote, long since) {
        this.level = level;
        this.remote = remote;
        this.since = since;
        this.awaitingReplicas = false;
    }

    /** The append's level waits for no flush ({@code OFF}): told now, on the appending thread. */
    public void durableNow(long lsn) {
        AppendCompletions.access().durable(owner, lsn);
    }

    /** The local flush passed the record: then the replicas' confirmation, if the level and a policy ask for it. */
    @Override
    protected void complete(long lsn) {
        if (!awaitingReplicas && level.waitsForReplicas() && remote.isActive()) {
            awaitingReplicas = true; // whether replicas must confirm is decided once the record is flushed locally
            remote.confirm(level, lsn, this, since);
            return;
        }
        AppendCompletions.access().durable(owner, lsn);
    }

    @Override
    protected void fail(Throwable cause) {
        AppendCompletions.access().failed(owner, cause);
    }
}
