package io.walden.core.internal.commit;

import io.walden.core.Durability;
import io.walden.core.internal.sync.BackgroundWriter;

/**
 * The one place an append's durability level is interpreted: what an append at that level waits for once its record
 * is in the WAL buffers. {@code OFF}: nothing (the background writer is nudged, the record is in the file within
 * {@code offWriteDelay}); {@code LOCAL}: the local flush ({@link GroupCommit}, counted as a commit); the remote levels:
 * the local flush, then the synchronous replicas' confirmation ({@link RemoteWaits}), decided once the record is
 * flushed. A blocking append takes the local part inside the log's activity ({@link #awaitLocal}) and the remote part
 * outside it ({@link #awaitRemote}); an asynchronous one is told through a {@link DurableWait} ({@link #whenDurable}).
 *
 * <p>Allocates nothing: the blocking waits park on reusable per-thread nodes, the asynchronous ones on the wait given.
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public final class CommitWaits {
    private final GroupCommit commit;
    private final RemoteWaits remote;
    private final BackgroundWriter writer;

    public CommitWaits(GroupCommit commit, RemoteWaits remote, BackgroundWriter writer) {
        this.commit = commit;
        this.remote = remote;
        this.writer = writer;
    }

    /**
     * When an append at {@code level} begins, for a remote level's timeout ({@link RemoteWaits#clockFor}): read before
     * the append's admission and copy, which the timeout covers.
     */
    public long clockFor(Durability level) {
        return remote.clockFor(level);
    }

    /** A blocking append's local part, inside the log's activity: its flush (counted as a commit), or a nudge at OFF. */
    public void awaitLocal(long lsn, Durability level) {
        if (level.waitsForLocalFlush()) {
            commit.awaitCommit(lsn);
        } else {
            writer.nudge(lsn); // into the file within offWriteDelay
        }
    }

    /**
     * A blocking append's remote part, outside the log's activity (it touches no segment, and may wait long for a
     * replica): returns at once for a local level or without a synchronous policy.
     *
     * @param since {@link #clockFor}, or {@link RemoteWaits#NOW}
     */
    public void awaitRemote(Durability level, long lsn, long since) {
        remote.await(level, lsn, since);
    }

    /**
     * An asynchronous append's whole wait: {@code wait} is told once the record at {@code lsn} reached {@code level} (at
     * once, on this thread, at OFF or when it is flushed already), or that it cannot. Called inside the log's activity.
     */
    public void whenDurable(long lsn, Durability level, long since, DurableWait wait) {
        wait.prepare(level, remote, since);
        if (!level.waitsForLocalFlush()) {
            writer.nudge(lsn); // into the file within offWriteDelay
            wait.reached(lsn);
            return;
        }
        commit.awaitFlushedAsync(wait, lsn);
        if (wait.needsWriter()) {
            writer.wakeUp();
        }
    }

    /**
     * A wait for a record appended earlier ({@code Wal.awaitDurable}): its local flush, not counted as a commit (the
     * append was, if it waited), inside the log's activity; then {@link #awaitRemote} outside it.
     */
    public void awaitFlushed(long lsn) {
        commit.awaitFlushed(lsn);
    }
}
