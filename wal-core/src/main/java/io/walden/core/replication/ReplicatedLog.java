package io.walden.core.replication;

import io.walden.core.Epoch;
import io.walden.core.EpochHistory;
import io.walden.core.ReplicationChunk;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A log as replication drives it: for wal-replication and wal-server, never for applications (which use
 * {@link io.walden.core.Wal}). Got from {@link io.walden.core.Wal#replication()}. The protocol and the safety argument
 * are in docs/replication.md; this is the seam they need of a log: its role (appends refused on a replica, promotion),
 * its epoch history, a replica's read limit and rewind, the write stage of received bytes, and what senders read.
 *
 * <p>Thread-safety: every method may be called from any thread, except where a method says it is for one receiver.
 */
public interface ReplicatedLog {

    /**
     * This log follows a primary from now on (a replica's receiver starts): readers see nothing beyond what a primary
     * is known to have flushed. For a log that had no limit (a primary's until now, or a new replica's) that is all it
     * holds flushed; a replica that restarts keeps the limit its last checkpoint recorded.
     */
    void limitReadsToPrimary();

    /**
     * A replica learnt that its primary flushed everything below {@code lsn} (a record boundary of this log): readers
     * may see up to there, once this log holds it too. Only moves forward; nothing on a primary's log.
     */
    void raiseReadLimit(long lsn);

    /**
     * The seam replication drives: set and clear the synchronous policy, report confirmed positions per level
     * ({@link SyncConfirmations}). With no policy set the remote levels act as {@link io.walden.core.Durability#LOCAL}.
     */
    SyncConfirmations remoteWaits();

    /**
     * Sets what truncation must keep: {@link io.walden.core.Wal#truncateBefore} never removes the segment holding the LSN the
     * supplier answers, nor any after it (replication slots: the oldest position a replica still needs;
     * {@code Long.MAX_VALUE} when none). The supplier is asked on each truncation, under the admin lock.
     */
    void retentionFloor(LongSupplier floor);

    /**
     * A replica learnt from its primary that every segment beginning below {@code floor} is in the group's archive (or
     * was given up under drop-archive); {@code Long.MAX_VALUE}: the primary keeps no archive. Until then, and again
     * after it becomes a replica or is rewound, the log keeps every segment for the archive: truncation and retention
     * never remove one the archive may lack (docs/replication.md, "Retention and the archive").
     */
    void primaryArchived(long floor);

    /**
     * What a sender tells its replica of the archive (the frame "Archived" of docs/replication-protocol.md): on a log
     * that takes appends, the start of its oldest segment not archived, {@code Long.MAX_VALUE} when it keeps no archive;
     * on a replica (a cascading sender), what its own primary said.
     */
    long archivedFloor();

    /**
     * Refuses every local append from now on with {@code reason} (a replica: "this log is a replica of
     * primary X; write to the primary"), or accepts them again with null (after a promotion).
     */
    void refuseAppends(String reason);

    /**
     * A primary stops taking appends for a while (a switchover hands its end over): they are refused with {@code reason},
     * but unlike {@link #refuseAppends} its readers, cursors and replicas go on seeing everything it holds, so that a
     * replica can catch up with its end. End it with {@link #promote(int)} (appends again, in a new epoch) or
     * {@link #refuseAppends} (a replica from now on).
     */
    void pauseAppends(String reason);

    /**
     * Whether a replication sender may ship this log's records once they are written, before they are flushed: true
     * when no replica can hold a record beyond this log's end that this log lost. So either the log was closed cleanly
     * before it was opened (everything it had shipped was flushed), or it began an epoch since (after a crash with
     * {@link io.walden.core.WalConfig.Builder#newEpochAfterCrash}, or by a promotion), which marks where its old epoch ended.
     */
    boolean mayShipUnflushed();

    /**
     * Runs {@code wakeUp} whenever a position a sender waits on moves (written, flushed, the read limit), the log fails,
     * or it closes, until {@link #stopWakingOnPositions}: for a sender's loop (its runner's wake), which waits for bytes to
     * ship or for this log's flush to report by idling, and looks at the positions again on its next turn. Register it
     * before the loop's first turn. {@code wakeUp} runs on the thread that moved the position (an appender's, the
     * writer's): it must not block, lock or allocate. While none is registered, a move costs one volatile read.
     */
    void wakeOnPositions(Runnable wakeUp);

    /** Stops running {@code wakeUp} (the reference registered; see {@link #wakeOnPositions}); nothing when it is not registered. */
    void stopWakingOnPositions(Runnable wakeUp);

    /**
     * Turns a replica's copy into a primary's log: flushes what was received, begins a new epoch at this log's
     * end, recorded durably in {@code walden.history} before anything is appended in it, and accepts local
     * appends again. Stop receiving from the old primary first: bytes applied after this would belong to its
     * epoch, not the new one.
     *
     * @return the new epoch
     * @throws io.walden.core.WalException when the history cannot be written (appends stay refused)
     */
    Epoch promote();

    /**
     * {@link #promote()}, numbering the new epoch at least {@code atLeastNumber} (a replica group's coordinator
     * knows of epochs this log never lived; no number is taken twice).
     */
    Epoch promote(int atLeastNumber);

    /**
     * After {@link #pauseAppends} or {@link #refuseAppends} with a reason: waits until every append that passed the
     * refusal check before it
     * (and so may still reserve its place) has left the log, so that nothing lands past the returned position. For a
     * switchover, which must hand over a log whose end no longer moves. Never call it from inside an append or claim.
     *
     * @return the insert position, final while appends stay refused; -1 when appends in flight did not leave in time
     * @throws IllegalStateException when appends are not refused
     */
    long drainAppends(long timeout, TimeUnit unit) throws InterruptedException;

    /**
     * A replica's log ends past where its epoch ended in its primary's history ({@link EpochHistory#rewindPoint}): the
     * records from {@code lsn} on were never the primary's (it lost them in a crash before flushing them, after they
     * were shipped, or this log was a primary that a promoted replica replaced). Removes them, durably, before
     * anything of the primary's is applied (docs/replication.md, "Shipping before the flush"):
     *
     * <ol>
     *   <li>everything is flushed, then every position (and the read limit) moves back to {@code lsn}, with the
     *       flush leader's flag and the write lock held;</li>
     *   <li>a checkpoint whose flush point is {@code lsn} is written, so that a later recovery never takes the
     *       removed bytes' absence for damage below a flush point;</li>
     *   <li>the bytes from {@code lsn} to its segment's end are zeroed and forced, and every later segment is renamed
     *       out of the log. A crash before this completes leaves the old records in place: the next connection to the
     *       primary rewinds again.</li>
     * </ol>
     *
     * Only on a log that refuses local appends (a replica), from the thread that applies replicated bytes; readers
     * never saw anything from {@code lsn} on unless this log was a primary before (its read limit was what it held).
     *
     * @return how many bytes of records were removed (0 when the log ends at or before {@code lsn})
     * @throws IllegalStateException when the log accepts appends, or {@code lsn} is below its oldest record or is not
     *                               a record boundary of it (then it cannot be a prefix of the primary's log)
     * @throws io.walden.core.WalException          on an I/O error (the log may then hold the old records still; retry)
     */
    long rewindTo(long lsn);

    /**
     * Takes a primary's history as this replica's own (PostgreSQL fetches the timeline history file), after
     * checking that this log can follow it: the primary's history must contain the epoch this log is in, from
     * the same start, lasting at least to this log's end, and must not be in an older epoch than the newest this log
     * knows of. Written durably before it returns, so that the bytes
     * streamed next are never held under an older history.
     *
     * @throws IllegalStateException when this log's history diverged from the primary's (rebuild the replica)
     */
    void adoptHistory(EpochHistory primary);

    /**
     * Appends log bytes received from a primary, verbatim and byte for byte (see Appender.applyReplicated):
     * whole records from exactly {@link io.walden.core.Wal#insertLsn()}, within one segment, each checked (prev chain, CRC)
     * before the positions move. Not made durable here: call {@link io.walden.core.Wal#flush()} (a replica's flush is what it
     * reports to its primary), or use a {@link #writeStage()}, which also decides when. For one receiver thread; local
     * appends must be refused meanwhile.
     *
     * @return the new written position
     */
    long writeReceived(long startLsn, ByteBuffer bytes);

    /**
     * A new write stage for one receiver: {@link #writeReceived} with the replica's flush policy, the one place that
     * decides when received bytes are forced (and so what a replica can acknowledge as flushed).
     */
    WriteStage writeStage();

    /**
     * Copies flushed log bytes for a replica (a primary's sender): whole records from {@code fromLsn}, within one
     * segment, at most {@code maxBytes} (but always at least one record), never past the flushed position. Only
     * flushed bytes leave: a replica never holds what this log could lose in a crash.
     *
     * @param fromLsn a record boundary: a replica's end; the start of a segment's first record is reached from
     *                the end of the previous segment (its closing record) as well
     * @return the chunk, or null when nothing flushed lies at or after {@code fromLsn} yet
     * @throws io.walden.core.LsnRemovedException when {@code fromLsn} was truncated away
     * @throws io.walden.core.IllegalLsnException when {@code fromLsn} is beyond the flushed position
     */
    ReplicationChunk readFlushed(long fromLsn, int maxBytes);

    /**
     * {@link #readFlushed}, but up to the written position: bytes in this log's files that may not be forced yet, for a
     * sender that ships before the flush (docs/replication.md, "Shipping before the flush"; see {@link #mayShipUnflushed}).
     * On a replica (a cascading sender) both stop at its {@link io.walden.core.Wal#readLimit()}: a downstream replica never holds what
     * could be rewound here.
     */
    ReplicationChunk readWritten(long fromLsn, int maxBytes);

    /**
     * {@link #readFlushed}, but up to this log's own flushed position even on a replica, past its
     * {@link io.walden.core.Wal#readLimit()}: for a member of a replica group that follows nobody, so that another member
     * can copy the tail it lacks before it is promoted (docs/operations.md, "When no member holds every log"). Those
     * bytes may hold records the old primary never acknowledged; once a promoted log holds them they are its history,
     * as PostgreSQL keeps what a promoted standby received. Never for a sender to a following replica: a log that still
     * follows a primary may rewind them.
     *
     * @param toLsn where the copy ends (another member's end, a record boundary): no record starting there or past it
     *              is read
     * @throws io.walden.core.LsnRemovedException when {@code fromLsn} was truncated away
     * @throws io.walden.core.IllegalLsnException when {@code fromLsn} is beyond the flushed position or not a record
     *                                            boundary
     */
    ReplicationChunk readHeld(long fromLsn, long toLsn, int maxBytes);

    /** Where a sender may read up to: the written or flushed position, and never past a replica's read limit. */
    long shippableLsn(boolean unflushed);

    /**
     * Waits until the flushed position passes {@code lsn}, the timeout passes, or the log closes (a sender
     * waiting for more to send). No thread is woken per record: the flush that moves the position wakes it.
     *
     * @return true when the flushed position is past {@code lsn}
     */
    boolean awaitFlushedPast(long lsn, long timeout, TimeUnit unit) throws InterruptedException;

    /** Waits until {@link #shippableLsn(boolean)} passes {@code lsn} (see {@link #awaitFlushedPast}). */
    boolean awaitShippablePast(long lsn, boolean unflushed, long timeout, TimeUnit unit) throws InterruptedException;
}
