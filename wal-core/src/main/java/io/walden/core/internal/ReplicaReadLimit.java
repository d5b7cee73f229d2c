package io.walden.core.internal;

import io.walden.core.internal.commit.Position;
import io.walden.core.internal.commit.ReadNotifier;
import io.walden.core.internal.recovery.Checkpointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A replica's read limit (see {@link io.walden.core.Wal#readLimit()}): its readers, appliers and cascading senders see
 * nothing at or beyond what its primary had flushed. Set when the log begins to follow, raised by the receiver as the
 * primary confirms more, lifted by a promotion; the control file learns of a set or lifted limit at once.
 *
 * <p>Thread-safety: the limit is set and lifted under the log's admin lock; raised by the one receiver; read by anyone.
 */
final class ReplicaReadLimit {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaReadLimit.class);

    private final Path dir;
    private final Object adminLock;
    private final Checkpointer checkpointer;
    private final ReadNotifier notifier;
    /** The limit; {@code Long.MAX_VALUE} for a primary's log. */
    private final Position readLimit;
    private final Position flushed;

    ReplicaReadLimit(Path dir, Object adminLock, Checkpointer checkpointer, ReadNotifier notifier, Position readLimit,
                     Position flushed) {
        this.dir = dir;
        this.adminLock = adminLock;
        this.checkpointer = checkpointer;
        this.notifier = notifier;
        this.readLimit = readLimit;
        this.flushed = flushed;
    }

    /** See ReplicatedLog.limitReadsToPrimary. */
    void limitToPrimary() {
        if (limit()) {
            persist();
        }
    }

    /** Sets the read limit to the flushed end if there was none, in memory; true when it did (then {@link #persist}). */
    boolean limit() {
        synchronized (adminLock) {
            if (readLimit.get() != Long.MAX_VALUE) {
                return false;
            }
            readLimit.set(flushed.get());
            return true;
        }
    }

    /**
     * A log that becomes a replica's is one from this moment, also for an open after a crash (which must not take it
     * for a primary's and begin an epoch of its own): the limit is checkpointed at once, not at the next checkpoint.
     */
    void persist() {
        synchronized (adminLock) {
            checkpoint();
        }
    }

    /** See ReplicatedLog.raiseReadLimit. */
    void raise(long lsn) {
        if (readLimit.get() != Long.MAX_VALUE && readLimit.advanceTo(lsn) == lsn) {
            notifier.signal();
        }
    }

    /** A promotion, under the admin lock: a primary's readers see all it has (its bytes are the new epoch's prefix). */
    void lift() {
        readLimit.set(Long.MAX_VALUE);
        checkpoint();
    }

    /**
     * The control file learns at once that the read limit was set or lifted. A failure is logged, and the next periodic
     * checkpoint tries again: a lifted limit is covered meanwhile by the history's mark, a set one by the role the
     * application gives the log at its next open.
     */
    private void checkpoint() {
        try {
            checkpointer.write(true);
        } catch (IOException e) {
            LOG.warn("Could not write a checkpoint after the read limit of {} changed: {} (the next checkpoint retries)",
                    dir, e.toString());
        }
    }
}
