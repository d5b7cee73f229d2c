package io.walden.core;

import io.walden.core.internal.AppendCompletions;
import io.walden.core.internal.commit.Completion;
import io.walden.core.replication.RemoteWaits;

/**
 * What an asynchronous append without a future tells: {@link #durable} once the append's durability level holds, or
 * {@link #failed} once it cannot ({@link NonWaitingAppends#tryAppend(int, java.nio.ByteBuffer, Durability, AppendCompletion)}).
 * Made for servers that append on an event loop: one instance per request in flight, reused from one append to the
 * next, so that appending and being told allocate nothing.
 *
 * <p>Exactly one of the two is called, once per append, on the thread that made the level hold (or found that it
 * cannot): the thread that led the flush (possibly the appender itself, before {@code tryAppend} returns), the
 * background writer, or a replication thread. Keep it short: hand heavy work to another thread. An instance may be
 * appended with again only after it was told.
 *
 * <p>Thread-safety: told once per append, with a happens-before edge from the append; not for concurrent use.
 */
public abstract class AppendCompletion extends Completion {
    static {
        AppendCompletions.install(new AppendCompletions.Access() {
            @Override
            public void prepare(AppendCompletion completion, Durability level, RemoteWaits remote, long since) {
                completion.prepare(level, remote, since);
            }

            @Override
            public void durable(AppendCompletion completion, long lsn) {
                completion.durable(lsn);
            }
        });
    }

    private Durability level;
    private RemoteWaits remote;
    private boolean awaitingReplicas;
    /** When the append began (RemoteWaits.clockFor): a remote level's timeout counts from it. */
    private long since;

    protected AppendCompletion() {
    }

    /** The record at {@code lsn} reached the append's durability level. */
    protected abstract void durable(long lsn);

    /**
     * The level cannot be reached: the log failed ({@link WalFailedException}), or, for a remote level, the replicas
     * did not confirm ({@link RemoteCommitTimeoutException}, {@link RemoteCommitUnconfirmedException}: the record is
     * durable locally).
     */
    protected abstract void failed(Throwable cause);

    /** Set by the log before it queues this completion for a record at {@code level}. */
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
        durable(lsn);
    }

    @Override
    protected final void fail(Throwable cause) {
        failed(cause);
    }
}
