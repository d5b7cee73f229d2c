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
import io.walden.core.internal.commit.Appender;
import io.walden.core.internal.commit.CommitWaits;
import io.walden.core.internal.commit.DurableWait;
import io.walden.core.internal.commit.FutureWait;
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
 * The write path behind {@link Wal}'s appends and claims. Every append, blocking, with a future or told through an
 * {@link AppendCompletion}, from an array or a buffer, takes one path ({@link #append(int, byte[], int, ByteBuffer,
 * int, Durability, Compression, boolean, DurableWait)}): admission ({@link #admit}: the record's checks, then the
 * log's: closed, refused, blocked, failed), the copy into the WAL buffers ({@link Appender}), and the wait for its
 * durability level ({@link CommitWaits}: the local flush, docs/group-commit.md, then the replicas'). Claims take the
 * same admission and the same wait, around the caller's own copy. The appends themselves allocate nothing
 * (AllocationTest); {@code appendAsync} allocates its future.
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
    /** What each append waits for, by its durability level. */
    private final CommitWaits waits;
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
        this.waits = new CommitWaits(commit, remote, writer);
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
        Activity.Cell cell = admit(0, payload.length);
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
        Activity.enter(cell);
        try {
            ensureOpen();
            commit.flushAll();
        } finally {
            Activity.exit(cell);
        }
    }

    // ------------------------------------------------------------------ appends: thin shells over one path

    public long append(int type, byte[] payload, int offset, int length, Durability durability, Compression compression) {
        Objects.checkFromIndexSize(offset, length, payload.length);
        return append(type, payload, offset, null, length, durability, compression, true, null);
    }

    public long append(int type, ByteBuffer payload, Durability durability, Compression compression) {
        return append(type, null, 0, payload, payload.remaining(), durability, compression, true, null);
    }

    public CompletableFuture<Long> appendAsync(int type, byte[] payload, Durability durability) {
        FutureWait wait = new FutureWait();
        append(type, payload, 0, null, payload.length, durability, config.compression(), true, wait);
        return wait.future;
    }

    public CompletableFuture<Long> appendAsync(int type, ByteBuffer payload, Durability durability, Compression compression) {
        FutureWait wait = new FutureWait();
        append(type, null, 0, payload, payload.remaining(), durability, compression, true, wait);
        return wait.future;
    }

    /** Null, with nothing appended, when the record would wait (see NonWaitingAppends#tryAppendAsync). */
    public CompletableFuture<Long> tryAppendAsync(int type, ByteBuffer payload, Durability durability, Compression compression) {
        FutureWait wait = new FutureWait();
        long lsn = append(type, null, 0, payload, payload.remaining(), durability, compression, false, wait);
        return lsn == Appender.NOT_READY ? null : wait.future;
    }

    /** False, with nothing appended, when the record would wait (see NonWaitingAppends#tryAppend). */
    public boolean tryAppend(int type, ByteBuffer payload, Durability durability, Compression compression,
                             AppendCompletion completion) {
        return append(type, null, 0, payload, payload.remaining(), durability, compression, false,
                AppendCompletions.waitOf(completion)) != Appender.NOT_READY;
    }

    /**
     * Every append's one path: admission ({@link #admit}), the copy into the WAL buffers from {@code array} (at
     * {@code offset}) or, when it is null, from {@code buffer}'s remaining bytes, then the wait for {@code durability}
     * ({@link CommitWaits}): blocking when {@code wait} is null (the local part inside the log's activity, the remote
     * part outside it), else told through {@code wait}. The appends are counted where they are published
     * (Publication.publish): the one place that knows a record was stored, and at what size.
     *
     * @param mayWait false: {@link Appender#NOT_READY}, with nothing appended, instead of waiting for the next segment
     *                or for room in the WAL buffers (a buffer's append only: an array's always may wait)
     * @return the record's LSN, or {@link Appender#NOT_READY}
     */
    private long append(int type, byte[] array, int offset, ByteBuffer buffer, int length, Durability durability,
                        Compression compression, boolean mayWait, DurableWait wait) {
        long since = waits.clockFor(durability); // before admission: a remote level's timeout counts from here
        Activity.Cell cell = admit(type, length);
        long lsn;
        try {
            lsn = array != null ? appender.append(type, array, offset, length, compression, durability)
                    : appender.append(type, buffer, compression, durability, mayWait);
            if (lsn == Appender.NOT_READY) {
                return lsn;
            }
            if (wait != null) {
                waits.whenDurable(lsn, durability, since, wait);
                return lsn;
            }
            waits.awaitLocal(lsn, durability);
        } finally {
            Activity.exit(cell);
        }
        waits.awaitRemote(durability, lsn, since); // outside: it touches no segment, and may wait long for a replica
        return lsn;
    }

    public boolean flushIfIdle() {
        Activity.Cell cell = activity.cell();
        Activity.enter(cell); // not enter(): a replica refuses appends, but what was appended must still be flushed
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
        Activity.enter(cell); // as flushIfIdle: a replica's appended records must still be flushed
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

    /** Reserves a record of {@code length} payload bytes for a zero-copy claim, into {@code claim}. */
    public void claim(int type, int length, ClaimSlot claim) {
        if (claim.isActive()) {
            throw new IllegalStateException("claim is still active: commit or abort it before claiming again");
        }
        Activity.Cell cell = admit(type, length); // left by the claim's commit or abort, on this thread
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
                waits.awaitLocal(lsn, durability);
            }
        } finally {
            Activity.exit(cell);
        }
        if (flags == 0) {
            waits.awaitRemote(durability, lsn, RemoteWaits.NOW);
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
                waits.awaitFlushed(lsn);
            } finally {
                Activity.exit(cell);
            }
        }
        waits.awaitRemote(durability, lsn, RemoteWaits.NOW);
    }

    /** Admission of a record: its checks, then the log's ({@link #enter}); the caller leaves the cell returned. */
    private Activity.Cell admit(int type, int length) {
        checkRecord(type, length);
        return enter();
    }

    private void checkRecord(int type, int length) {
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
    private Activity.Cell enter() {
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
