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
import io.walden.core.internal.commit.Completion;
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
import java.util.concurrent.ScheduledExecutorService;

/**
 * The write path behind {@link Wal}'s appends and claims. Every append, blocking, with a future or told through an
 * {@link AppendCompletion}, and every claim takes one admission ({@link #admit}: the record's checks, then the log's:
 * closed, refused, blocked, failed), its copy into the WAL buffers ({@link Appender}), and one wait for its durability
 * level, which {@link CommitWaits} alone interprets (the local flush, docs/group-commit.md, then the replicas'): a
 * blocking one ({@link #awaitAndLeave}) or an asynchronous one ({@link #appendTold}); the public methods are shells over
 * these. Appends are counted in one place, where they are published (Publication.publish: the one step that knows a
 * record of the application was stored, at its level and stored size). The appends themselves allocate nothing
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
            writer.nudge(lsn);
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

    // ------------------------------------------------------------------ appends: shells over one admission and one wait

    public long append(int type, byte[] payload, int offset, int length, Durability durability, Compression compression) {
        Objects.checkFromIndexSize(offset, length, payload.length);
        long since = waits.clockFor(durability); // before admission: a remote level's timeout counts from here
        Activity.Cell cell = admit(type, length);
        long lsn;
        try {
            lsn = appender.append(type, payload, offset, length, compression, durability);
        } catch (Throwable t) {
            Activity.exit(cell);
            throw t;
        }
        return awaitAndLeave(lsn, durability, since, cell);
    }

    public long append(int type, ByteBuffer payload, Durability durability, Compression compression) {
        long since = waits.clockFor(durability);
        Activity.Cell cell = admit(type, payload.remaining());
        long lsn;
        try {
            lsn = appender.append(type, payload, compression, durability, true);
        } catch (Throwable t) {
            Activity.exit(cell);
            throw t;
        }
        return awaitAndLeave(lsn, durability, since, cell);
    }

    /** An array's bytes through {@link #appendTold}: the future allocates already, the buffer around the array is cheap. */
    public CompletableFuture<Long> appendAsync(int type, byte[] payload, Durability durability) {
        FutureWait wait = new FutureWait();
        appendTold(type, ByteBuffer.wrap(payload), durability, config.compression(), true, wait);
        return wait.future;
    }

    public CompletableFuture<Long> appendAsync(int type, ByteBuffer payload, Durability durability, Compression compression) {
        FutureWait wait = new FutureWait();
        appendTold(type, payload, durability, compression, true, wait);
        return wait.future;
    }

    /** Null, with nothing appended, when the record would wait (see NonWaitingAppends#tryAppendAsync). */
    public CompletableFuture<Long> tryAppendAsync(int type, ByteBuffer payload, Durability durability, Compression compression) {
        FutureWait wait = new FutureWait();
        return appendTold(type, payload, durability, compression, false, wait) == Appender.NOT_READY ? null : wait.future;
    }

    /** False, with nothing appended, when the record would wait (see NonWaitingAppends#tryAppend). */
    public boolean tryAppend(int type, ByteBuffer payload, Durability durability, Compression compression,
                             AppendCompletion completion) {
        return appendTold(type, payload, durability, compression, false, AppendCompletions.waitOf(completion))
                != Appender.NOT_READY;
    }

    /**
     * Every asynchronous append: admission, the copy of {@code payload}'s remaining bytes (its position unchanged),
     * then {@code wait} is told once the record reached {@code durability} ({@link CommitWaits#whenDurable}).
     *
     * @param mayWait false: {@link Appender#NOT_READY}, with nothing appended, instead of waiting for the next segment
     *                or for room in the WAL buffers
     * @return the record's LSN, or {@link Appender#NOT_READY}
     */
    private long appendTold(int type, ByteBuffer payload, Durability durability, Compression compression,
                            boolean mayWait, DurableWait wait) {
        long since = waits.clockFor(durability);
        Activity.Cell cell = mayWait ? admit(type, payload.remaining()) : tryAdmit(type, payload.remaining());
        if (cell == null) {
            return Appender.NOT_READY; // a dormant log whose WAL buffers would have to wait for room
        }
        try {
            long lsn = appender.append(type, payload, compression, durability, mayWait);
            if (lsn != Appender.NOT_READY) {
                waits.whenDurable(lsn, durability, since, wait);
            }
            return lsn;
        } finally {
            Activity.exit(cell);
        }
    }

    /**
     * Every blocking append's and claim's wait, once its record is published: the local part inside the log's activity,
     * which it then leaves ({@code cell}, entered at admission), the remote part outside it (it touches no segment, and
     * may wait long for a replica). Returns {@code lsn}.
     *
     * @param since {@link CommitWaits#clockFor}, or {@link RemoteWaits#NOW}
     */
    private long awaitAndLeave(long lsn, Durability durability, long since, Activity.Cell cell) {
        try {
            waits.awaitLocal(lsn, durability);
        } finally {
            Activity.exit(cell);
        }
        waits.awaitRemote(durability, lsn, since);
        return lsn;
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

    /** @param loop the calling event loop, for a deferred force ({@link GroupCommit#leadWhenGathered(ScheduledExecutorService)}), or null */
    public long flushWhenGathered(ScheduledExecutorService loop) {
        Activity.Cell cell = activity.cell();
        Activity.enterToFlush(cell); // as flushIfIdle: a replica's appended records must still be flushed
        try {
            ensureOpen();
            return commit.leadWhenGathered(loop);
        } finally {
            Activity.exit(cell);
        }
    }

    /**
     * Tells {@code completion} once the record at {@code lsn} is flushed (at once, on this thread, if it is), without
     * asking for a flush: the caller does ({@link #flushWhenGathered}, {@link #requestFlush}). Counted as a commit.
     */
    public void whenFlushed(Completion completion, long lsn) {
        commit.awaitFlushedAsync(completion, lsn);
    }

    /**
     * Flushes every written record without waiting for it (a replica's receiver, which many logs share, and must not
     * block in one log's force): {@code completion} is told once they are flushed, or failed, on the thread that made
     * them so. A store's log leads a round the journal's force thread forces ({@link GroupCommit#flushDeferred}), or,
     * when a flush of its own is already in progress, has its background writer flush after it; a log of its own is
     * flushed on this thread, as {@link #flush} would.
     */
    public void flushAsync(Completion completion) {
        Activity.Cell cell = activity.cell();
        Activity.enterToFlush(cell); // the round reads the segments by address: close() and truncation wait for it
        try {
            if (!commit.flushDeferred(completion)) {
                writer.wakeUp();
            }
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

    /**
     * Publishes a claim (as padding when aborted), waits for its durability, and leaves the activity it entered. A null
     * {@code durability}: the caller makes the record durable itself (the store journal's entries, each followed by
     * a flush): no wait, and no nudge of the background writer, which would otherwise wake for every entry.
     */
    public void finishClaim(long lsn, int recordLength, int flags, Durability durability, Activity.Cell cell) {
        try {
            appender.publish(lsn, recordLength, flags, durability);
        } catch (Throwable t) {
            Activity.exit(cell);
            throw t;
        }
        if (flags == 0 && durability != null) {
            awaitAndLeave(lsn, durability, RemoteWaits.NOW, cell);
        } else {
            Activity.exit(cell); // aborted (padding), or the caller makes it durable itself: nothing to wait for
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
            Activity.Cell cell = admitted(enterToFlush()); // a wait: it does not wake a dormant log
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

    /** {@link #admit} for an append that must not wait: null when the log is dormant and cannot wake at once. */
    private Activity.Cell tryAdmit(int type, int length) {
        checkRecord(type, length);
        return tryEnter();
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
        return admitted(cell);
    }

    /** {@link #enter} for a caller that must not wait: null when the log is dormant and cannot wake at once. */
    private Activity.Cell tryEnter() {
        Activity.Cell cell = activity.cell();
        return Activity.tryEnter(cell) ? admitted(cell) : null;
    }

    private Activity.Cell enterToFlush() {
        Activity.Cell cell = activity.cell();
        Activity.enterToFlush(cell);
        return cell;
    }

    /** Refuses a closed, replica, blocked or failed log to the caller just entered (leaving again). */
    private Activity.Cell admitted(Activity.Cell cell) {
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
