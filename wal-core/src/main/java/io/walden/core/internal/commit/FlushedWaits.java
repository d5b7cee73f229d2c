package io.walden.core.internal.commit;

/**
 * The asynchronous waits for the flushed position (futures and event loops' completions): told, in LSN order, by
 * whoever moves the position or finds it failed ({@link OrderedCompletions} does the ordering and the telling). A
 * wait fails as soon as the log is failed, since a failed log's flushed position never moves again.
 *
 * <p>Thread-safety: as {@link OrderedCompletions}: add from any thread, drain from any thread (one drains at a time).
 */
public final class FlushedWaits extends OrderedCompletions {
    private final Position flushed;
    private final LogFailure failure;

    public FlushedWaits(Position flushed, LogFailure failure) {
        this.flushed = flushed;
        this.failure = failure;
    }

    @Override
    protected long position() {
        return flushed.get();
    }

    @Override
    protected Throwable failure(long oldestLsn, long oldestSince, long nowNanos) {
        return failure.get();
    }
}
