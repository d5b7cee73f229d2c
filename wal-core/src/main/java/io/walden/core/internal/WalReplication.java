package io.walden.core.internal;

import io.walden.core.Epoch;
import io.walden.core.EpochHistory;
import io.walden.core.ReplicationChunk;
import io.walden.core.internal.commit.Completion;
import io.walden.core.internal.commit.RemoteWaits;
import io.walden.core.replication.ReplicatedLog;
import io.walden.core.replication.WriteStage;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A log's side that replication drives ({@link ReplicatedLog}), over one part per job: its role ({@link LogRole}:
 * appends refused on a replica, promotion, rewind), its epochs ({@link LogEpochs}), a replica's read limit
 * ({@link ReplicaReadLimit}), the receiving side ({@link ReceivedWrites}: received bytes and their write stage), and
 * the shipping side ({@link ShippingReads}: what senders read and wait for; what the archive and the slots hold back).
 * {@link Wal}'s facade reads the role's refusal and the history here.
 *
 * <p>Thread-safety: as its parts; the retention floor is volatile.
 */
public final class WalReplication implements ReplicatedLog {
    private final LogRole role;
    private final LogEpochs epochs;
    private final ReplicaReadLimit readLimit;
    private final ReceivedWrites received;
    private final ShippingReads shipping;
    private final RemoteWaits remote;
    /** What the group's archive holds as far as this log knows: learnt from a primary, told to replicas. */
    private final ArchiveFloor archiveFloor;
    /** What truncation must keep: replication slots hold back the LSN their replicas still need. */
    private volatile LongSupplier retentionFloor = () -> Long.MAX_VALUE;

    /**
     * The rest of the log as its replication side calls back into it: the parts that are wired after this side (the
     * write path admits appends by {@link #refusal()}) or that span several parts. {@code ReplicationLog} is it over
     * WalParts; the parts of this side use it.
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

        /** {@link #flush} without waiting: {@code completion} is told once it is done ({@link WritePath#flushAsync}). */
        void flushAsync(Completion completion);

        /**
         * After a replica's rewind to {@code lsn}: what the rest of the log derived from the records from there on
         * (what the archiver marked archived, what the archive floor and the readers learnt) no longer holds.
         */
        void rewound(long lsn);
    }

    WalReplication(LogRole role, LogEpochs epochs, ReplicaReadLimit readLimit, ReceivedWrites received,
                   ShippingReads shipping, RemoteWaits remote, ArchiveFloor archiveFloor) {
        this.role = role;
        this.epochs = epochs;
        this.readLimit = readLimit;
        this.received = received;
        this.shipping = shipping;
        this.remote = remote;
        this.archiveFloor = archiveFloor;
    }

    // ------------------------------------------------------------------ role and epochs

    /** Why local appends are refused (a replica), or null. Volatile read: on every append. */
    public String refusal() {
        return role.refusal();
    }

    public EpochHistory history() {
        return epochs.history();
    }

    /**
     * After a crash, before anything is appended: the epoch this log was in ends at the recovered end, and a new one
     * begins there (docs/replication.md, "Shipping before the flush").
     */
    public void beginEpochAfterCrash() {
        epochs.beginAfterCrash();
    }

    @Override
    public void limitReadsToPrimary() {
        readLimit.limitToPrimary();
    }

    @Override
    public void raiseReadLimit(long lsn) {
        readLimit.raise(lsn);
    }

    @Override
    public void pauseAppends(String reason) {
        role.pauseAppends(reason);
    }

    @Override
    public void refuseAppends(String reason) {
        role.refuseAppends(reason);
    }

    @Override
    public long drainAppends(long timeout, TimeUnit unit) throws InterruptedException {
        return role.drainAppends(timeout, unit);
    }

    @Override
    public boolean mayShipUnflushed() {
        // A replica (a cascading sender) ships nothing beyond its read limit, which nothing can rewind.
        return role.refusal() != null || epochs.mayShipUnflushed();
    }

    @Override
    public Epoch promote() {
        return promote(0);
    }

    @Override
    public Epoch promote(int atLeastNumber) {
        return role.promote(atLeastNumber);
    }

    @Override
    public long rewindTo(long lsn) {
        return role.rewindTo(lsn);
    }

    @Override
    public void adoptHistory(EpochHistory primary) {
        epochs.adopt(primary);
    }

    @Override
    public RemoteWaits remoteWaits() {
        return remote;
    }

    // ------------------------------------------------------------------ the receiving side

    @Override
    public long writeReceived(long startLsn, ByteBuffer bytes) {
        return received.write(startLsn, bytes);
    }

    @Override
    public WriteStage writeStage() {
        return received.stage();
    }

    // ------------------------------------------------------------------ the shipping side

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
    public ReplicationChunk readFlushed(long fromLsn, int maxBytes) {
        return shipping.read(fromLsn, maxBytes, false);
    }

    @Override
    public ReplicationChunk readWritten(long fromLsn, int maxBytes) {
        return shipping.read(fromLsn, maxBytes, true);
    }

    @Override
    public ReplicationChunk readHeld(long fromLsn, long toLsn, int maxBytes) {
        return shipping.readHeld(fromLsn, toLsn, maxBytes);
    }

    @Override
    public long shippableLsn(boolean unflushed) {
        return shipping.shippableLsn(unflushed);
    }

    @Override
    public void wakeOnPositions(Runnable wakeUp) {
        shipping.wakeOnPositions(wakeUp);
    }

    @Override
    public void stopWakingOnPositions(Runnable wakeUp) {
        shipping.stopWakingOnPositions(wakeUp);
    }

    @Override
    public boolean awaitFlushedPast(long lsn, long timeout, TimeUnit unit) throws InterruptedException {
        return shipping.awaitShippablePast(lsn, false, timeout, unit);
    }

    @Override
    public boolean awaitShippablePast(long lsn, boolean unflushed, long timeout, TimeUnit unit) throws InterruptedException {
        return shipping.awaitShippablePast(lsn, unflushed, timeout, unit);
    }
}
