package io.walden.core.internal;

import io.walden.core.Epoch;
import io.walden.core.EpochHistory;
import io.walden.core.Lsn;
import io.walden.core.internal.commit.Activity;
import io.walden.core.internal.commit.GroupCommit;
import io.walden.core.internal.commit.Position;
import io.walden.core.internal.cursor.CursorReplay;
import io.walden.core.internal.record.DictionaryTrainer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * A log's role: a primary's takes local appends; a replica's (or a group member's in standby, fenced or paused) refuses
 * them, naming why ({@link #refusal()}, read by the write path on every append). The role changes here: following a
 * primary ({@link #refuseAppends}), draining the appends in flight, a replica's promotion, and a replica's rewind.
 *
 * <p>Thread-safety: the refusal is volatile; promotion and rewind take the log's admin lock inside its activity.
 */
final class LogRole {
    private static final Logger LOG = LoggerFactory.getLogger(LogRole.class);

    /** Whether the log is open. */
    private final WalReplication.Log log;
    private final Path dir;
    private final Object adminLock;
    private final Activity activity;
    private final GroupCommit commit;
    private final Position insert;
    private final LogEpochs epochs;
    private final ReplicaReadLimit readLimit;
    /** What the group's archive holds as far as this log knows: learnt from a primary, forgotten on a role change. */
    private final ArchiveFloor archiveFloor;
    /** The cursors' side of following and promotion. */
    private final CursorReplay cursors;
    /** The writer's zstd dictionary: a promoted log looks in the log again before it trains one of its own. */
    private final DictionaryTrainer dictionaries;
    /** A replica's removal of records its primary never had. */
    private final LogRewind rewind;
    /** When set, local appends are refused with this reason (a replica names its primary). */
    private volatile String appendsRefused;

    LogRole(WalReplication.Log log, Path dir, Object adminLock, Activity activity, GroupCommit commit, Position insert,
            LogEpochs epochs, ReplicaReadLimit readLimit, ArchiveFloor archiveFloor, CursorReplay cursors,
            DictionaryTrainer dictionaries, LogRewind rewind) {
        this.log = log;
        this.dir = dir;
        this.adminLock = adminLock;
        this.activity = activity;
        this.commit = commit;
        this.insert = insert;
        this.epochs = epochs;
        this.readLimit = readLimit;
        this.archiveFloor = archiveFloor;
        this.cursors = cursors;
        this.dictionaries = dictionaries;
        this.rewind = rewind;
    }

    /** Why local appends are refused (a replica), or null. Volatile read: on every append. */
    String refusal() {
        return appendsRefused;
    }

    /** See ReplicatedLog.pauseAppends. */
    void pauseAppends(String reason) {
        this.appendsRefused = Objects.requireNonNull(reason, "reason");
    }

    /** See ReplicatedLog.refuseAppends. */
    void refuseAppends(String reason) {
        // A replica's readers never see what its primary may not have flushed: the limit first, in memory.
        boolean limited = reason != null && readLimit.limit();
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
            readLimit.persist(); // after the refusal: a fence is not held up by the checkpoint's force
        }
    }

    /** See ReplicatedLog.drainAppends. */
    long drainAppends(long timeout, TimeUnit unit) throws InterruptedException {
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

    /** See ReplicatedLog.promote(int). */
    Epoch promote(int atLeastNumber) {
        Activity.Cell cell = activity.cell();
        Activity.enter(cell);
        try {
            log.ensureOpen();
            commit.flushAll();
            synchronized (adminLock) {
                long end = insert.get();
                EpochHistory next = epochs.beginAt(end, atLeastNumber); // durable before the first append of the epoch
                readLimit.lift();
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

    /** See ReplicatedLog.rewindTo. */
    long rewindTo(long lsn) {
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
}
