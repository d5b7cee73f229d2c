package io.walden.core.internal.commit;

import io.walden.core.WalFailedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log's failed state, and the rule behind it ("fsyncgate"): a write or force that failed is never retried as if
 * nothing happened, since after a failed force the kernel may already have dropped the dirty pages and a retry would
 * report success for data that is gone. So the first failure is recorded, everybody waiting for the flushed position
 * is released with it, and the log refuses every later durable append until it is reopened (docs/durability.md).
 *
 * <p>Guarantees: the state is entered at most once (the first failure is the one reported) and never left; every
 * blocked committer is unparked and every pending asynchronous wait for the flushed position fails once it is entered
 * (the state is stored before the wake-ups, and waiters re-read it after registering, so none misses it); readers
 * waiting for a position are woken to see it too.
 *
 * <p>Thread-safety: every method may be called from any thread; {@link #fail} is idempotent.
 */
public final class LogFailure {
    /** GroupCommit's logger, as before this state had a class of its own: log configuration keeps matching it. */
    private static final Logger LOG = LoggerFactory.getLogger(GroupCommit.class);

    private final Waiter.Stack waiters;
    private final ReadNotifier notifier;
    /** The asynchronous waits to fail, which in turn read this state. Set once, in GroupCommit's constructor. */
    private FlushedWaits flushedWaits;
    private volatile WalFailedException failure;

    public LogFailure(Waiter.Stack waiters, ReadNotifier notifier) {
        this.waiters = waiters;
        this.notifier = notifier;
    }

    public void bind(FlushedWaits flushedWaits) {
        this.flushedWaits = flushedWaits;
    }

    /** Why the log failed, or null while it has not. */
    public WalFailedException get() {
        return failure;
    }

    public boolean failed() {
        return failure != null;
    }

    /** Throws the failed state's exception if the log has failed. */
    public void check() {
        WalFailedException f = failure;
        if (f != null) {
            throw new WalFailedException(f.getMessage(), f.getCause());
        }
    }

    /** Enters the failed state (idempotent) and releases everybody. */
    public void fail(String what, Throwable cause) {
        synchronized (this) {
            if (failure == null) {
                failure = new WalFailedException(what + "; the log refuses appends until it is reopened "
                        + "(a failed force is never retried: its data may already be lost from the page cache)", cause);
                LOG.error("Walden log entered the failed state: {}", failure.getMessage(), cause);
            }
        }
        waiters.wakeAll();
        flushedWaits.drain();
        notifier.signal();
    }
}
