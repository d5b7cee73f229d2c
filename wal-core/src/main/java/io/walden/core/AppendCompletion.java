package io.walden.core;

import io.walden.core.internal.commit.AppendCompletions;
import io.walden.core.internal.commit.AppendWait;

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
public abstract class AppendCompletion {
    static {
        AppendCompletions.install(new AppendCompletions.Access() {
            @Override
            public AppendWait waitOf(AppendCompletion completion) {
                return completion.wait;
            }

            @Override
            public void durable(AppendCompletion completion, long lsn) {
                completion.durable(lsn);
            }

            @Override
            public void failed(AppendCompletion completion, Throwable cause) {
                completion.failed(cause);
            }
        });
    }

    /** The log's node for this completion's waits, made once with it: queueing it for an append allocates nothing. */
    private final AppendWait wait = new AppendWait(this);

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
}
