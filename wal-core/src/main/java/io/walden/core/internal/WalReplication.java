package io.walden.core.internal;

import io.walden.core.Epoch;
import io.walden.core.EpochHistory;
import io.walden.core.Lsn;
import io.walden.core.ReplicationChunk;
import io.walden.core.WalException;
import io.walden.core.internal.commit.Activity;
import io.walden.core.internal.commit.Appender;
import io.walden.core.internal.commit.GroupCommit;
import io.walden.core.internal.commit.Position;
import io.walden.core.internal.commit.ReadNotifier;
import io.walden.core.internal.commit.RemoteWaits;
import io.walden.core.internal.cursor.CursorReplay;
import io.walden.core.internal.record.ControlRecord;
import io.walden.core.internal.record.DictionaryTrainer;
import io.walden.core.internal.recovery.Checkpointer;
import io.walden.core.internal.recovery.HistoryFile;
import io.walden.core.replication.WriteStage;
import io.walden.core.replication.ReplicatedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * A log's side that replication drives ({@link ReplicatedLog}): its role (appends refused on a replica, promotion),
 * its epoch history, a replica's read limit and rewind, the write stage of received bytes, and what a sender reads.
 * It owns the role state that {@link Wal}'s facade reads: the refusal, the history, whether an epoch began since open.
 *
 * <p>Thread-safety: state changes happen under the log's admin lock; the refusal, the history and the retention floor
 * are volatile, read without it (the refusal on every append).
 */
public final class WalReplication implements ReplicatedLog {
    private static final Logger LOG = LoggerFactory.getLogger(WalReplication.class);

    /** The rest of the log (whether it is open, its oldest LSN, its flush); never the facade. */
    private final Log log;
    private final Path dir;
    private final Object adminLock;
    private final Activity activity;
    private final GroupCommit commit;
    private final Checkpointer checkpointer;
    private final Appender appender;
    private final ReadNotifier notifier;
    /** The cursors' side of following, promotion, rewinds and received control records. */
    private final CursorReplay cursors;
    private final RemoteWaits remote;
    private final Position insert;
    private final Position written;
    private final Position flushed;
    /** A replica's read limit (see {@link Wal#readLimit()}); moved here under the admin lock, read by readers. */
    private final Position readLimit;
    /** The writer's zstd dictionary: a promoted log looks in the log again before it trains one of its own. */
    private final DictionaryTrainer dictionaries;
    /** What the group's archive holds as far as this log knows: learnt from a primary, forgotten on a role change. */
    private final ArchiveFloor archiveFloor;
    private final long segmentSize;
    private final long logId;
    private final boolean shutDownCleanly;
    /** A replica's removal of records its primary never had. */
    private final LogRewind rewind;
    /** What senders read: chunks of whole records below the shippable end. */
    private final ShippingReads shipping;
    /** What truncation must keep: replication slots hold back the LSN their replicas still need. */
    private volatile LongSupplier retentionFloor = () -> Long.MAX_VALUE;
    /** When set, local appends are refused with this reason (a replica names its primary). */
    private volatile String appendsRefused;
    /** The epochs this log lived through (walden.history); replaced under the admin lock, after the file. */
    private volatile EpochHistory history;
    /** An epoch began since this log was opened (a promotion, or after a crash): see {@link #mayShipUnflushed()}. */
    private volatile boolean epochBegunSinceOpen;
    /** This log began the history's current epoch itself (walden.history marks it so); under the admin lock. */
    private boolean currentEpochBegunHere;

    /**
     * The rest of the log as its replication side calls back into it: the parts that are wired after this side (the
     * write path admits appends by {@link #refusal()}) or that span several parts. {@code ReplicationLog} is it over
     * WalParts; {@link LogRewind} and {@link ShippingReads} use it as well.
     */
    public interface Log {
        /** Refuses a closed log (a {@link io.walden.core.WalClosedException}). */
        void ensureOpen();

        /** Whether the log is closed or closing: waits end then rather than wait out their timeout. */
        boolean isClosed();

        /** The first record still kept (see {@link Wal#oldestLsn()}). */
        long oldestLsn();

        /** Flushes everything written so far (a replica's write stage, for the bytes it received). */
        void flush();

        /**
         * After a replica's rewind to {@code lsn}: what the rest of the log derived from the records from there on
         * (what the archiver marked archived, what the archive floor and the readers learnt) no longer holds.
         */
        void rewound(long lsn);
    }

    /**
     * @param history         the epoch history as the log was opened with it, and whether it began its current epoch
     * @param shutDownCleanly whether the log was closed cleanly before this open (see {@link #mayShipUnflushed()})
     * @param rewind          a replica's rewind, over the same log
     * @param shipping        what senders read of the same log
     */
    WalReplication(Log log, Path dir, Object adminLock, Activity activity, GroupCommit commit,
                   Checkpointer checkpointer, Appender appender, ReadNotifier notifier, CursorReplay cursors,
                   RemoteWaits remote, Position insert, Position written, Position flushed, Position readLimit,
                   DictionaryTrainer dictionaries, ArchiveFloor archiveFloor, long segmentSize, long logId,
                   HistoryFile.Stored history, boolean shutDownCleanly, LogRewind rewind, ShippingReads shipping) {
        this.log = log;
        this.dir = dir;
        this.adminLock = adminLock;
        this.activity = activity;
        this.commit = commit;
        this.checkpointer = checkpointer;
        this.appender = appender;
        this.notifier = notifier;
        this.cursors = cursors;
        this.remote = remote;
        this.insert = insert;
        this.written = written;
        this.flushed = flushed;
        this.readLimit = readLimit;
        this.dictionaries = dictionaries;
        this.archiveFloor = archiveFloor;
        this.segmentSize = segmentSize;
        this.logId = logId;
        this.history = history.history();
        this.currentEpochBegunHere = history.begunHere();
        this.shutDownCleanly = shutDownCleanly;
        this.rewind = rewind;
        this.shipping = shipping;
    }

    /** Why local appends are refused (a replica), or null. Volatile read: on every append. */
    public String refusal() {
        return appendsRefused;
    }

    public EpochHistory history() {
        return history;
    }

    @Override
    public void limitReadsToPrimary() {
        if (limitReads()) {
            persistReadLimit();
        }
    }

    /** Sets the read limit to the flushed end if there was none; true when it did. */
    private boolean limitReads() {
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
    private void persistReadLimit() {
        synchronized (adminLock) {
            checkpointReadLimit();
        }
    }

    @Override
    public void raiseReadLimit(long lsn) {
        if (readLimit.get() != Long.MAX_VALUE && readLimit.advanceTo(lsn) == lsn) {
            notifier.signal();
        }
    }


    @Override
    public RemoteWaits remoteWaits() {
        return remote;
    }

    @Override
    public void retentionFloor(LongSupplier floor) {
        this.retentionFloor = floor == null ? () -> Long.MAX_VALUE : floor;
    }

    /** What replication needs kept (see {@link #retentionFloor(java.util.function.LongSupplier)}); asked under the admin lock. */
    public long retentionFloor() {
        return retentionFloor.getAsLong();
    }

    @Override
    public void primaryArchived(long floor) {
        archiveFloor.learnt(floor);
    }

    @Override
    public long archivedFloor() {
        return archiveFloor.toReplicas();
    }

    @Override
    public void pauseAppends(String reason) {
        this.appendsRefused = Objects.requireNonNull(reason, "reason");
    }

    @Override
    public void refuseAppends(String reason) {
        // A replica's readers never see what its primary may not have flushed: the limit first, in memory.
        boolean limited = reason != null && limitReads();
        if (reason != null) {
            // Following a primary from now on (again, or another one): what the last one said of the archive, or this
            // log's own archive as a primary, says nothing of the next one's; it says so right after its Welcome.
            archiveFloor.forget(0);
        }
        this.appendsRefused = reason; // before the cursors follow: no cursor change slips in between
        if (reason != null) {
            cursors.following();
        }
        if (limited) {
            persistReadLimit(); // after the refusal: a fence is not held up by the checkpoint's force
        }
    }


    /**
     * After a crash, before anything is appended: the epoch this log was in ends at the recovered end, and a new one
     * begins there (docs/replication.md, "Shipping before the flush").
     */
    public void beginEpochAfterCrash() {
        synchronized (adminLock) {
            long end = insert.get();
            EpochHistory next = history.next(end);
            writeHistory(next, true);
            epochBegunSinceOpen = true;
            LOG.warn("The log in {} was not closed cleanly: epoch {} begins at its recovered end {}, so that a replica "
                    + "holding records beyond it (received before they were flushed here) rewinds them", dir,
                    next.current().number(), Lsn.format(end));
        }
    }

    @Override
    public boolean mayShipUnflushed() {
        // A replica (a cascading sender) ships nothing beyond its read limit, which nothing can rewind.
        return appendsRefused != null || shutDownCleanly || epochBegunSinceOpen;
    }

    @Override
    public boolean awaitPositions(BooleanSupplier condition, long timeout, TimeUnit unit)
            throws InterruptedException {
        return notifier.await(() -> condition.getAsBoolean() ? 1 : 0, 0, timeout, unit, log::isClosed);
    }

    @Override
    public Epoch promote() {
        return promote(0);
    }

    @Override
    public long drainAppends(long timeout, TimeUnit unit) throws InterruptedException {
        if (appendsRefused == null) {
            throw new IllegalStateException("drainAppends() before refuseAppends(): appends would keep landing");
        }
        // The refusal was stored (volatile) before this snapshot reads who is inside; an append stores its entry
        // (volatile) before it reads the refusal. So an append is either in the snapshot or refused (Dekker).
        BooleanSupplier left = activity.gracePeriod();
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        while (!left.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return -1;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            LockSupport.parkNanos(100_000);
        }
        return insert.get();
    }

    @Override
    public Epoch promote(int atLeastNumber) {
        Activity.Cell cell = activity.cell();
        Activity.enter(cell);
        try {
            log.ensureOpen();
            commit.flushAll();
            synchronized (adminLock) {
                long end = insert.get();
                EpochHistory next = history.next(end, atLeastNumber);
                // Durable before the first append of the epoch: the history, marked as begun here, is what an open
                // after a crash trusts to ignore the read limit of this log's replica days (the checkpoint below may
                // not have reached the disk).
                writeHistory(next, true);
                epochBegunSinceOpen = true;
                readLimit.set(Long.MAX_VALUE); // a primary's readers see all it has: its bytes are the new epoch's prefix
                checkpointReadLimit();
                cursors.promoted(); // its cursors: everything it holds, kept live from now on
                dictionaries.lookInLogAgain(); // the primary's, as it reached this replica, before training one
                archiveFloor.forget(0); // its own archiver decides from now on; a stale report must not outlive a later demotion
                appendsRefused = null;
                LOG.info("Promoted the log in {}: epoch {} begins at {} (history {})", dir, next.current().number(),
                        Lsn.format(end), next);
                return next.current();
            }
        } finally {
            Activity.exit(cell);
        }
    }

    @Override
    public long rewindTo(long lsn) {
        Activity.Cell cell = activity.cell();
        Activity.enter(cell);
        try {
            log.ensureOpen();
            commit.checkNotFailed();
            synchronized (adminLock) {
                if (appendsRefused == null) {
                    throw new IllegalStateException("only a replica's log is rewound (this one accepts appends)");
                }
                return rewind.removeAfter(lsn);
            }
        } finally {
            Activity.exit(cell);
        }
    }

    @Override
    public void adoptHistory(EpochHistory primary) {
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
                writeHistory(primary, false);
                LOG.info("Log {} now follows the epoch history {}", dir, primary);
            }
        }
    }

    /**
     * The control file learns at once that the read limit was set or lifted. A failure is logged, and the next periodic
     * checkpoint tries again: a lifted limit is covered meanwhile by the history's mark, a set one by the role the
     * application gives the log at its next open.
     */
    private void checkpointReadLimit() {
        try {
            checkpointer.write(true);
        } catch (IOException e) {
            LOG.warn("Could not write a checkpoint after the read limit of {} changed: {} (the next checkpoint retries)",
                    dir, e.toString());
        }
    }

    /** @param begunHere whether this log begins {@code next}'s current epoch itself (rather than adopting it) */
    private void writeHistory(EpochHistory next, boolean begunHere) {
        try {
            HistoryFile.write(dir, next, begunHere);
        } catch (IOException e) {
            throw new WalException("could not record the epoch history " + next + " in " + dir + ": " + e.getMessage(), e);
        }
        history = next;
        currentEpochBegunHere = begunHere;
    }

    @Override
    public long writeReceived(long startLsn, ByteBuffer bytes) {
        Activity.Cell cell = activity.cell();
        Activity.enter(cell);
        try {
            log.ensureOpen();
            commit.checkNotFailed(); // a replica that cannot flush must not keep accepting (and confirming) bytes
            synchronized (adminLock) { // one applier at a time; never concurrently with truncation or close
                if (ControlRecord.anyCursorChangeIn(bytes)) {
                    cursors.received(); // the cursor files exist before the record can be flushed here
                }
                return appender.applyReplicated(startLsn, bytes);
            }
        } finally {
            Activity.exit(cell);
        }
    }

    @Override
    public WriteStage writeStage() {
        return new ReplicaWriteStage(this, log, written, flushed, segmentSize, logId);
    }

    @Override
    public ReplicationChunk readFlushed(long fromLsn, int maxBytes) {
        return shipping.read(fromLsn, maxBytes, false);
    }

    @Override
    public ReplicationChunk readWritten(long fromLsn, int maxBytes) {
        return shipping.read(fromLsn, maxBytes, true);
    }

    @Override
    public long shippableLsn(boolean unflushed) {
        return shipping.shippableLsn(unflushed);
    }

    @Override
    public boolean awaitFlushedPast(long lsn, long timeout, TimeUnit unit) throws InterruptedException {
        return awaitShippablePast(lsn, false, timeout, unit);
    }

    @Override
    public boolean awaitShippablePast(long lsn, boolean unflushed, long timeout, TimeUnit unit) throws InterruptedException {
        return notifier.await(() -> shippableLsn(unflushed), lsn, timeout, unit, log::isClosed);
    }
}
