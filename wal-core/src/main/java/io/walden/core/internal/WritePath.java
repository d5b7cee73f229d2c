package io.walden.core.internal;

import io.walden.core.AppendCompletion;
import io.walden.core.AppendsBlockedException;
import io.walden.core.AppendsRefusedException;
import io.walden.core.Compression;
import io.walden.core.Durability;
import io.walden.core.IllegalLsnException;
import io.walden.core.Lsn;
import io.walden.core.PayloadTooLargeException;
import io.walden.core.WalClosedException;
import io.walden.core.WalConfig;
import io.walden.core.WalFailedException;
import io.walden.core.internal.commit.Activity;
import io.walden.core.internal.commit.AppendCompletions;
import io.walden.core.internal.commit.AppendWait;
import io.walden.core.internal.commit.Appender;
import io.walden.core.internal.commit.GroupCommit;
import io.walden.core.internal.commit.Position;
import io.walden.core.internal.commit.RemoteWaits;
import io.walden.core.internal.commit.WalBuffers;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.sync.BackgroundWriter;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * The write path behind {@link Wal}'s appends and claims: admission ({@link #enter()}: closed, refused, blocked,
 * failed), the copy into the WAL buffers ({@link Appender}), and the wait for each append's durability, local
 * ({@link GroupCommit}, docs/group-commit.md) then remote ({@link RemoteWaits}). The appends themselves allocate
 * nothing (AllocationTest); the futures of {@code appendAsync} do.
 *
 * <p>Thread-safety: every method may be called from any thread; the admission flags are volatile.
 */
public final class WritePath {
    private final WalConfig config;
    private final Path dir;
    private final int maxPayload;
    private final Activity activity;
    private final Appender appender;
    private final WalBuffers ring;
    private final GroupCommit commit;
    private final BackgroundWriter writer;
    private final RemoteWaits remote;
    private final WalReplication replication;
    private final Position insert;
    private final Position flushed;
    private volatile boolean closed;
    /** When set, local appends are held back with this reason until it clears (the archive is too far behind). */
    private volatile String appendsBlocked;

    public WritePath(WalConfig config, Path dir, Activity activity, Appender appender, WalBuffers ring, GroupCommit commit,
              BackgroundWriter writer, RemoteWaits remote, WalReplication replication, Position insert, Position flushed) {
        this.config = config;
        this.dir = dir;
        this.maxPayload = config.maxPayloadSize();
        this.activity = activity;
        this.appender = appender;
        this.ring = ring;
        this.commit = commit;
        this.writer = writer;
        this.remote = remote;
        this.replication = replication;
        this.insert = insert;
        this.flushed = flushed;
    }

    /** From now on every entry is refused (see {@link #enter()}); close() then waits for those inside. */
    public void close() {
        closed = true;
    }

    public boolean isClosed() {
        return closed;
    }

    public void ensureOpen() {
        if (closed) {
            throw new WalClosedException("the log in " + dir + " is closed");
        }
    }

    /** Holds appends back with {@code reason} ({@link AppendsBlockedException}), or lets them in again (null). */
    public void blockAppends(String reason) {
        appendsBlocked = reason;
    }

    public WalConfig config() {
        return config;
    }

    /** A control record (a cursor change) at OFF: the caller waits for the durability it needs. */
    public long appendControl(byte[] payload) {
        checkRecord(0, payload.length);
        Activity.Cell cell = enter();
        try {
            long lsn = appender.appendControl(payload); // its durability is waited for by the caller (Cursors)
            writer.nudge();
            return lsn;
        } finally {
            Activity.exit(cell);
        }
    }

    /** Forces every written record now (as a durable append would). */
    public void flush() {
        Activity.Cell cell = activity.cell();
        Activity.enterToFlush(cell); // a dormant log has nothing to flush: it stays asleep
        try {
            ensureOpen();
            commit.flushAll();
        } finally {
            Activity.exit(cell);
        }
    }


    public long append(int type, byte[] payload, int offset, int length, Durability durability, Compression compression) {
        Objects.checkFromIndexSize(offset, length, payload.length);
        checkRecord(type, length);
        long since = remote.clockFor(durability);
        Activity.Cell cell = enter();
        long lsn;
        try {
            lsn = appender.append(type, payload, offset, length, compression, durability);
            awaitLocalCommit(lsn, durability);
        } finally {
            Activity.exit(cell);
        }
        remote.await(durability, lsn, since); // outside: it touches no segment, and may wait long for a replica
        return lsn;
    }

    public long append(int type, ByteBuffer payload, Durability durability, Compression compression) {
        checkRecord(type, payload.remaining());
        long since = remote.clockFor(durability);
        Activity.Cell cell = enter();
        long lsn;
        try {
            lsn = appender.append(type, payload, compression, durability, true);
            awaitLocalCommit(lsn, durability);
        } finally {
            Activity.exit(cell);
        }
        remote.await(durability, lsn, since);
        return lsn;
    }

    public CompletableFuture<Long> appendAsync(int type, byte[] payload, Durability durability) {
        checkRecord(type, payload.length);
        long since = remote.clockFor(durability);
        Activity.Cell cell = enter();
        try {
            return durabilityFuture(appender.append(type, payload, 0, payload.length, config.compression(), durability),
                    durability, since);
        } finally {
            Activity.exit(cell);
        }
    }

    public CompletableFuture<Long> appendAsync(int type, ByteBuffer payload, Durability durability, Compression compression) {
        return appendAsync(type, payload, durability, compression, true);
    }

    public CompletableFuture<Long> tryAppendAsync(int type, ByteBuffer payload, Durability durability, Compression compression) {
        return appendAsync(type, payload, durability, compression, false);
    }

    /** With {@code mayWait} false: null, with nothing appended, when the record would wait (see NonWaitingAppends#tryAppendAsync). */
    private CompletableFuture<Long> appendAsync(int type, ByteBuffer payload, Durability durability, Compression compression,
                                                boolean mayWait) {
        checkRecord(type, payload.remaining());
        long since = remote.clockFor(durability);
        Activity.Cell cell = enter();
        try {
            long lsn = appender.append(type, payload, compression, durability, mayWait);
            return lsn == Appender.NOT_READY ? null : durabilityFuture(lsn, durability, since);
        } finally {
            Activity.exit(cell);
        }
    }

    public boolean tryAppend(int type, ByteBuffer payload, Durability durability, Compression compression,
                             AppendCompletion completion) {
        checkRecord(type, payload.remaining());
        long since = remote.clockFor(durability);
        Activity.Cell cell = enter();
        try {
            long lsn = appender.append(type, payload, compression, durability, false);
            if (lsn == Appender.NOT_READY) {
                return false;
            }
            AppendWait wait = AppendCompletions.waitOf(completion);
            wait.prepare(durability, remote, since);
            if (!durability.waitsForLocalFlush()) {
                writer.nudge(); // into the file within offWriteDelay
                wait.durableNow(lsn);
                return true;
            }
            commit.awaitFlushedAsync(wait, lsn);
            return true;
        } finally {
            Activity.exit(cell);
        }
    }

    public boolean flushIfIdle() {
        Activity.Cell cell = activity.cell();
        Activity.enterToFlush(cell); // not enter(): a replica refuses appends, but what was appended must still be flushed
        boolean led;
        try {
            ensureOpen();
            led = commit.leadIfIdle();
        } finally {
            Activity.exit(cell);
        }
        // Someone must flush what this thread's flush did not cover: a record before ours was still being copied (the
        // flush stops below it), or another thread was flushing.
        if (!led || commit.hasAsyncWaits()) {
            writer.wakeUp();
        }
        return led;
    }

    public long flushWhenGathered() {
        Activity.Cell cell = activity.cell();
        Activity.enterToFlush(cell); // as flushIfIdle: a replica's appended records must still be flushed
        try {
            ensureOpen();
            return commit.leadWhenGathered();
        } finally {
            Activity.exit(cell);
        }
    }

    public void requestFlush() {
        writer.wakeUp();
    }

    private CompletableFuture<Long> durabilityFuture(long lsn, Durability durability, long since) {
        if (!durability.waitsForLocalFlush()) {
            writer.nudge(); // into the file within offWriteDelay
            return CompletableFuture.completedFuture(lsn);
        }
        CompletableFuture<Long> f = commit.flushedFuture(lsn);
        if (!f.isDone()) {
            writer.wakeUp();
        }
        if (durability != Durability.LOCAL) {
            // Whether replicas must confirm is decided once the record is flushed locally, not now.
            return f.thenCompose(l -> remote.confirmation(durability, l, since));
        }
        return f;
    }

    /** Reserves a record of {@code length} payload bytes for a zero-copy claim, into {@code claim}. */
    public void claim(int type, int length, ClaimSlot claim) {
        if (claim.isActive()) {
            throw new IllegalStateException("claim is still active: commit or abort it before claiming again");
        }
        checkRecord(type, length);
        Activity.Cell cell = enter(); // left by the claim's commit or abort, on this thread
        boolean ok = false;
        try {
            long lsn = appender.reserve(RecordDescriptor.aligned(RecordDescriptor.recordLength(length)));
            appender.writeHeaderFields(lsn, type); // the payload's bytes are zero already (WalBuffers' invariant)
            claim.open(this, ring, lsn, length, cell);
            ok = true;
        } finally {
            if (!ok) {
                Activity.exit(cell);
            }
        }
    }

    /** Publishes a claim (as padding when aborted), waits for its durability, and leaves the activity it entered. */
    public void finishClaim(long lsn, int recordLength, int flags, Durability durability, Activity.Cell cell) {
        try {
            appender.publish(lsn, recordLength, flags, durability);
            if (flags == 0) {
                awaitLocalCommit(lsn, durability);
            }
        } finally {
            Activity.exit(cell);
        }
        if (flags == 0) {
            remote.await(durability, lsn);
        }
    }

    public void awaitDurable(long lsn, Durability durability) {
        if (!durability.waitsForLocalFlush()) {
            return;
        }
        if (lsn >= insert.get()) {
            throw new IllegalLsnException("LSN " + Lsn.format(lsn) + " is not below the insert position "
                    + Lsn.format(insert.get()));
        }
        if (flushed.get() <= lsn) { // a record already flushed is answered even by a closed or failed log
            Activity.Cell cell = enter();
            try {
                commit.awaitFlushed(lsn);
            } finally {
                Activity.exit(cell);
            }
        }
        remote.await(durability, lsn);
    }

    /** The local part of an append's durability wait (counted as a commit, unlike a user's {@link Wal#awaitDurable}). */
    private void awaitLocalCommit(long lsn, Durability durability) {
        if (durability.waitsForLocalFlush()) {
            commit.awaitCommit(lsn);
        } else {
            writer.nudge(); // into the file within offWriteDelay
        }
    }

    public void checkRecord(int type, int length) {
        if (length > maxPayload) {
            throw new PayloadTooLargeException(length, maxPayload);
        }
        if (type < 0 || type > RecordDescriptor.MAX_TYPE) {
            throw new IllegalArgumentException("record type must be from 0 to " + RecordDescriptor.MAX_TYPE + ", got " + type);
        }
    }

    /**
     * Enters the log's {@link Activity} and refuses a closed or failed log. The closed check comes after the
     * entry's volatile store, pairing with close(), which sets {@code closed} before it waits for everyone
     * inside to leave: either close() waits for this caller, or this caller sees the flag and reserves
     * nothing. So no reservation is ever abandoned and no mapping is released under a caller.
     */
    public Activity.Cell enter() {
        Activity.Cell cell = activity.cell();
        Activity.enter(cell);
        if (closed) {
            Activity.exit(cell);
            throw new WalClosedException("the log in " + dir + " is closed");
        }
        String refused = replication.refusal();
        if (refused != null) {
            Activity.exit(cell);
            throw new AppendsRefusedException(refused);
        }
        String blocked = appendsBlocked;
        if (blocked != null) {
            Activity.exit(cell);
            throw new AppendsBlockedException(blocked);
        }
        WalFailedException f = commit.failure();
        if (f != null) {
            Activity.exit(cell);
            throw new WalFailedException(f.getMessage(), f.getCause());
        }
        return cell;
    }
}
