package io.walden.core.internal.commit;

import io.walden.core.AppendCompletion;

/**
 * The {@link DurableWait} of one {@link AppendCompletion}: made once with its completion and reused with it, so that an
 * append told through a completion allocates nothing. Its appender flushes for it (an event loop), so queueing it
 * never wakes the background writer.
 *
 * <p>Thread-safety: as {@link DurableWait}.
 */
public final class AppendWait extends DurableWait {
    private final AppendCompletion owner;

    public AppendWait(AppendCompletion owner) {
        this.owner = owner;
    }

    @Override
    protected void reached(long lsn) {
        AppendCompletions.access().durable(owner, lsn);
    }

    @Override
    protected void unreachable(Throwable cause) {
        AppendCompletions.access().failed(owner, cause);
    }

    @Override
    protected boolean needsWriter() {
        return false; // the appender flushes (NonWaitingAppends#flushIfIdle, #flushWhenGathered)
    }
}
