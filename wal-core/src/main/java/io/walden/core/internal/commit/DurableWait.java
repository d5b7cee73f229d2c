package io.walden.core.internal.commit;

import io.walden.core.Durability;

/**
 * One asynchronous wait for an append's durability level, in its two stages: the node queued for the local flush
 * ({@link GroupCommit#awaitFlushedAsync}) and then, where the level and a synchronous policy ask for it, for the
 * replicas' confirmation ({@link RemoteWaits#confirm}). {@link CommitWaits} prepares and queues it; a subclass says
 * whom it tells ({@link AppendWait}: an {@link io.walden.core.AppendCompletion}, reused with it so that such an append
 * allocates nothing; {@link FutureWait}: a future).
 *
 * <p>Ownership: {@link #prepare} is called by the appending thread before the node is queued (the queue's push
 * publishes it); {@link #complete} and {@link #fail} by the one thread that tells it, at a time.
 */
public abstract class DurableWait extends Completion {
    private Durability level;
    private RemoteWaits remote;
    private boolean awaitingReplicas;
    /** When the append began (RemoteWaits.clockFor): a remote level's timeout counts from it. */
    private long since;

    protected DurableWait() {
    }

    /** The record reached the append's level. */
    protected abstract void reached(long lsn);

    /** The level cannot be reached (the log failed, the replicas did not confirm). */
    protected abstract void unreachable(Throwable cause);

    /**
     * Whether the background writer must be woken for the local flush once this wait is queued: not when it was told
     * already, nor when the caller flushes itself (an event loop, see NonWaitingAppends#flushIfIdle).
     */
    protected abstract boolean needsWriter();

    /** Set before the wait is queued for a record at {@code level}. */
    final void prepare(Durability level, RemoteWaits remote, long since) {
        this.level = level;
        this.remote = remote;
        this.since = since;
        this.awaitingReplicas = false;
    }

    /** The local flush passed the record: then the replicas' confirmation, if the level and a policy ask for it. */
    @Override
    protected final void complete(long lsn) {
        if (!awaitingReplicas && level.waitsForReplicas() && remote.isActive()) {
            awaitingReplicas = true; // whether replicas must confirm is decided once the record is flushed locally
            remote.confirm(level, lsn, this, since);
            return;
        }
        reached(lsn);
    }

    @Override
    protected final void fail(Throwable cause) {
        unreachable(cause);
    }
}
