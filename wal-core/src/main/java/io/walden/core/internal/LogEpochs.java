package io.walden.core.internal;

import io.walden.core.EpochHistory;
import io.walden.core.Lsn;
import io.walden.core.WalException;
import io.walden.core.internal.commit.Position;
import io.walden.core.internal.recovery.HistoryFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A log's epochs (walden.history, docs/replication.md "Failover"): the history it lived through, the epochs it begins
 * itself (after a crash, at a promotion) and the primary's history it adopts when it follows one, and so whether what
 * it has not flushed may be shipped ({@link #mayShipUnflushed}).
 *
 * <p>Thread-safety: changes under the log's admin lock, the file written before the history is replaced; the history and
 * whether an epoch began since open are volatile, read without the lock.
 */
final class LogEpochs {
    private static final Logger LOG = LoggerFactory.getLogger(LogEpochs.class);

    /** Whether the log is open, and its oldest record. */
    private final WalReplication.Log log;
    private final Path dir;
    private final Object adminLock;
    private final Position insert;
    private final boolean shutDownCleanly;
    /** The epochs this log lived through (walden.history); replaced under the admin lock, after the file. */
    private volatile EpochHistory history;
    /** An epoch began since this log was opened (a promotion, or after a crash): see {@link #mayShipUnflushed()}. */
    private volatile boolean epochBegunSinceOpen;
    /** This log began the history's current epoch itself (walden.history marks it so); under the admin lock. */
    private boolean currentEpochBegunHere;

    /**
     * @param stored          the epoch history as the log was opened with it, and whether it began its current epoch
     * @param shutDownCleanly whether the log was closed cleanly before this open (see {@link #mayShipUnflushed()})
     */
    LogEpochs(WalReplication.Log log, Path dir, Object adminLock, Position insert, HistoryFile.Stored stored,
              boolean shutDownCleanly) {
        this.log = log;
        this.dir = dir;
        this.adminLock = adminLock;
        this.insert = insert;
        this.history = stored.history();
        this.currentEpochBegunHere = stored.begunHere();
        this.shutDownCleanly = shutDownCleanly;
    }

    EpochHistory history() {
        return history;
    }

    /**
     * Whether a primary's records may be shipped before they are flushed: only when no crash can bring back fewer than
     * were shipped under the same epoch, because the log was closed cleanly before this open or an epoch began since
     * (docs/replication.md, "Shipping before the flush"). A replica's own rule is its read limit (WalReplication).
     */
    boolean mayShipUnflushed() {
        return shutDownCleanly || epochBegunSinceOpen;
    }

    /**
     * After a crash, before anything is appended: the epoch this log was in ends at the recovered end, and a new one
     * begins there (docs/replication.md, "Shipping before the flush").
     */
    void beginAfterCrash() {
        synchronized (adminLock) {
            long end = insert.get();
            EpochHistory next = history.next(end);
            write(next, true);
            epochBegunSinceOpen = true;
            LOG.warn("The log in {} was not closed cleanly: epoch {} begins at its recovered end {}, so that a replica "
                    + "holding records beyond it (received before they were flushed here) rewinds them", dir,
                    next.current().number(), Lsn.format(end));
        }
    }

    /**
     * A promotion, under the admin lock, everything flushed: an epoch numbered at least {@code atLeastNumber} begins at
     * {@code end}, durable before the first append of the epoch. The history, marked as begun here, is what an open after
     * a crash trusts to ignore the read limit of this log's replica days (a checkpoint may not have reached the disk).
     */
    EpochHistory beginAt(long end, int atLeastNumber) {
        EpochHistory next = history.next(end, atLeastNumber);
        write(next, true);
        epochBegunSinceOpen = true;
        return next;
    }

    /** See ReplicatedLog.adoptHistory. */
    void adopt(EpochHistory primary) {
        synchronized (adminLock) {
            log.ensureOpen();
            long end = insert.get();
            if (primary.current().number() < history.current().number()) {
                // PostgreSQL's rule: never follow a primary behind the newest timeline this log knows of. A stale
                // primary (an old one still running after a promotion) would hand over records the new one never had.
                throw new IllegalStateException("this log cannot follow a log in epoch " + primary.current().number()
                        + ": it knows of epoch " + history.current().number() + " (history " + history
                        + "); that primary is stale");
            }
            // A log that holds no record (a new replica, beginning where its primary's oldest record is) cannot have
            // diverged: there is nothing in it that the primary might not have.
            String divergence = end == log.oldestLsn() ? null : primary.divergence(history.at(end), end);
            if (divergence != null) {
                throw new IllegalStateException("this log cannot follow a log with history " + primary + ": " + divergence);
            }
            if (!primary.equals(history) || currentEpochBegunHere) {
                write(primary, false);
                LOG.info("Log {} now follows the epoch history {}", dir, primary);
            }
        }
    }

    /** @param begunHere whether this log begins {@code next}'s current epoch itself (rather than adopting it) */
    private void write(EpochHistory next, boolean begunHere) {
        try {
            HistoryFile.write(dir, next, begunHere);
        } catch (IOException e) {
            throw new WalException("could not record the epoch history " + next + " in " + dir + ": " + e.getMessage(), e);
        }
        history = next;
        currentEpochBegunHere = begunHere;
    }
}
