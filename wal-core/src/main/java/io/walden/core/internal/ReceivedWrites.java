package io.walden.core.internal;

import io.walden.core.internal.commit.Activity;
import io.walden.core.internal.commit.Appender;
import io.walden.core.internal.commit.GroupCommit;
import io.walden.core.internal.commit.Position;
import io.walden.core.internal.cursor.CursorReplay;
import io.walden.core.internal.record.ControlRecord;
import io.walden.core.replication.WriteStage;

import java.nio.ByteBuffer;

/**
 * A replica's receiving side: the bytes its primary sent, appended verbatim ({@link Appender#applyReplicated}), and the
 * {@link WriteStage} its receiver writes and flushes them through ({@link ReplicaWriteStage}).
 *
 * <p>Thread-safety: one applier at a time (under the log's admin lock), never beside truncation or close.
 */
final class ReceivedWrites {
    /** Whether the log is open; its flush, for the write stage. */
    private final WalReplication.Log log;
    private final Object adminLock;
    private final Activity activity;
    private final GroupCommit commit;
    private final Appender appender;
    /** The cursors' side of received control records. */
    private final CursorReplay cursors;
    private final Position written;
    private final Position flushed;
    private final long segmentSize;
    private final long logId;

    ReceivedWrites(WalReplication.Log log, Object adminLock, Activity activity, GroupCommit commit, Appender appender,
                   CursorReplay cursors, Position written, Position flushed, long segmentSize, long logId) {
        this.log = log;
        this.adminLock = adminLock;
        this.activity = activity;
        this.commit = commit;
        this.appender = appender;
        this.cursors = cursors;
        this.written = written;
        this.flushed = flushed;
        this.segmentSize = segmentSize;
        this.logId = logId;
    }

    /** See ReplicatedLog.writeReceived. */
    long write(long startLsn, ByteBuffer bytes) {
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

    /** Whether the log failed: its flushed position never moves again, so no force is worth starting. */
    boolean failed() {
        return commit.failure() != null;
    }

    /** See ReplicatedLog.writeStage. */
    WriteStage stage() {
        return new ReplicaWriteStage(this, log, written, flushed, segmentSize, logId);
    }
}
