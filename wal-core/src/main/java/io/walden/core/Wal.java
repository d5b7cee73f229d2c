package io.walden.core;

import io.walden.core.archive.Archiver;
import io.walden.core.metrics.WalMetrics;
import io.walden.core.recovery.LogOpener;
import io.walden.core.replication.ReplicatedLog;
import io.micrometer.core.instrument.binder.MeterBinder;
import net.openhft.chronicle.bytes.BytesStore;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A durable write-ahead log in one directory: memory-mapped, CRC'd segments, lock-free group commit,
 * and a durability level chosen per append (PostgreSQL's {@code synchronous_commit}).
 *
 * <pre>{@code
 * try (Wal wal = Wal.open(WalConfig.builder(Path.of("data/wal")).build())) {
 *     long lsn = wal.append("hello".getBytes(UTF_8));          // returns once forced (durability ON)
 *     try (WalReader r = wal.reader(lsn)) {
 *         WalRecord rec = r.next();                             // the record just appended
 *     }
 * }
 * }</pre>
 *
 * <p>Thread-safety: every method may be called from any number of threads at once. Appends never take a
 * lock; administrative calls ({@link #truncateBefore}, {@link #close}) serialise among themselves.
 *
 * <p>Opening a log runs recovery ({@link #recoveryReport()}); a second open of the same directory, from
 * this process or another, is refused with {@link WalLockedException}.
 */
public final class Wal implements AutoCloseable {

    static {
        ChronicleSettings.apply();
    }

    /** The log's parts and their lifetimes; this class is the facade over them. */
    private final WalParts parts;

    private Wal(WalConfig config, LogOpener.OpenedLog opened) {
        this.parts = new WalParts(this, config, opened);
    }

    // ------------------------------------------------------------------ open

    /**
     * Opens (or creates) the log in {@code config.directory()}, running recovery: finds the end of the
     * log from the last checkpoint, cuts off a torn tail, forces the repair and records a new checkpoint
     * before returning, so that nothing recovery did can be undone by a later crash.
     *
     * @throws WalLockedException    when another process or another Wal holds the directory
     * @throws WalCorruptedException when once-durable data fails validation (see {@link WalConfig.Builder#truncateAtCorruption})
     * @throws WalException          on any I/O error, with the cause
     */
    public static Wal open(WalConfig config) {
        Wal wal = new Wal(config, LogOpener.open(config));
        wal.parts.start();
        return wal;
    }


    // ------------------------------------------------------------------ append (WritePath)

    /** Appends with the configured default durability; returns the record's LSN once that level is reached. */
    public long append(byte[] payload) {
        return append(0, payload, 0, payload.length, parts.config.durability());
    }

    /** Appends and returns the record's LSN once {@code durability} is reached. */
    public long append(byte[] payload, Durability durability) {
        return append(0, payload, 0, payload.length, durability);
    }

    /** Appends a record with a user-defined type tag (0 to 65535). */
    public long append(int type, byte[] payload, Durability durability) {
        return append(type, payload, 0, payload.length, durability);
    }

    /** Appends {@code length} bytes of {@code payload} from {@code offset}, with a type tag. */
    public long append(int type, byte[] payload, int offset, int length, Durability durability) {
        return append(type, payload, offset, length, durability, parts.config.compression());
    }

    /**
     * {@link #append(int, byte[], int, int, Durability)}, stored with {@code compression} when that saves space
     * (readers get the original bytes back either way; see {@link Compression}).
     */
    public long append(int type, byte[] payload, int offset, int length, Durability durability, Compression compression) {
        return parts.writes.append(type, payload, offset, length, durability, compression);
    }

    /** Appends the remaining bytes of {@code payload} (its position is not moved). */
    public long append(int type, ByteBuffer payload, Durability durability) {
        return append(type, payload, durability, parts.config.compression());
    }

    /** {@link #append(int, ByteBuffer, Durability)}, stored with {@code compression} when that saves space. */
    public long append(int type, ByteBuffer payload, Durability durability, Compression compression) {
        return parts.writes.append(type, payload, durability, compression);
    }

    /** Appends the readable bytes of a Chronicle {@link BytesStore} (from its read position, for its read remaining). */
    public long append(int type, BytesStore<?, ?> payload, Durability durability) {
        return parts.writes.append(type, payload, durability);
    }

    /**
     * Appends without blocking for durability: the future completes with the LSN once {@code durability}
     * is reached (or exceptionally if the log fails first). No thread waits per future: the flush that
     * covers the record completes it. Futures pending together complete in LSN order.
     */
    public CompletableFuture<Long> appendAsync(byte[] payload, Durability durability) {
        return appendAsync(0, payload, durability);
    }

    /** {@link #appendAsync(byte[], Durability)} with a type tag. */
    public CompletableFuture<Long> appendAsync(int type, byte[] payload, Durability durability) {
        return parts.writes.appendAsync(type, payload, durability);
    }

    /**
     * {@link #appendAsync(int, byte[], Durability)} for the remaining bytes of a buffer (its position is not moved;
     * the bytes are copied into the log before this returns, so the buffer may be reused or released at once).
     */
    public CompletableFuture<Long> appendAsync(int type, ByteBuffer payload, Durability durability) {
        return appendAsync(type, payload, durability, parts.config.compression());
    }

    /** {@link #appendAsync(int, ByteBuffer, Durability)}, stored with {@code compression} when that saves space. */
    public CompletableFuture<Long> appendAsync(int type, ByteBuffer payload, Durability durability, Compression compression) {
        return parts.writes.appendAsync(type, payload, durability, compression);
    }

    /**
     * {@link #appendAsync(int, ByteBuffer, Durability)} for a thread that must never wait (an event loop): returns
     * null, with nothing appended, when the record needs the next segment and the segment preparer has not made it
     * ready yet (at a roll, while a new segment is zero-filled), or room in WAL buffers full of records not yet
     * written. Append from a thread that may wait then.
     */
    public CompletableFuture<Long> tryAppendAsync(int type, ByteBuffer payload, Durability durability) {
        return tryAppendAsync(type, payload, durability, parts.config.compression());
    }

    /** {@link #tryAppendAsync(int, ByteBuffer, Durability)}, stored with {@code compression} when that saves space. */
    public CompletableFuture<Long> tryAppendAsync(int type, ByteBuffer payload, Durability durability, Compression compression) {
        return parts.writes.tryAppendAsync(type, payload, durability, compression);
    }

    /**
     * Appends without waiting and without allocating, for an event loop: {@code completion} is told once the record
     * reaches {@code durability} (see {@link AppendCompletion}; for {@code OFF}, and for a record some flush already
     * covered, before this returns). Returns false, with nothing appended and nothing told, when the record would have
     * to wait for the next segment or for room in the WAL buffers (as {@link #tryAppendAsync} returns null).
     *
     * <p>Nothing is flushed because of this call alone, so that a batch of appends costs one flush: follow it with
     * {@link #flushIfIdle()} (this thread flushes now unless a flush is in progress) or {@link #requestFlush()} (the
     * background writer flushes; no thread waits).
     *
     * @throws WalClosedException, WalFailedException, AppendsRefusedException, PayloadTooLargeException as appends do
     */
    public boolean tryAppend(int type, ByteBuffer payload, Durability durability, AppendCompletion completion) {
        return tryAppend(type, payload, durability, parts.config.compression(), completion);
    }

    /** {@link #tryAppend(int, ByteBuffer, Durability, AppendCompletion)}, stored with {@code compression} when that saves space. */
    public boolean tryAppend(int type, ByteBuffer payload, Durability durability, Compression compression,
                             AppendCompletion completion) {
        return parts.writes.tryAppend(type, payload, durability, compression, completion);
    }

    /**
     * Flushes now, on this thread, unless a flush is in progress, and tells the asynchronous appends it covered (their
     * completions run on this thread). When another thread is flushing, asks the background writer for the flush after
     * it instead and returns at once. For a thread that appended a batch with {@link #tryAppend} and has nothing better
     * to do than wait for the disk: a lone request's commit then costs no thread hand-off.
     *
     * @return true when this thread flushed (or nothing needed flushing)
     */
    public boolean flushIfIdle() {
        return parts.writes.flushIfIdle();
    }

    /** Asks the background writer to flush what is published (for {@link #tryAppend}): no thread waits. */
    public void requestFlush() {
        parts.writes.requestFlush();
    }

    /**
     * Reserves a record of {@code length} payload bytes for zero-copy writing through {@code claim}.
     * The claim must be committed or aborted promptly (see {@link WalClaim}).
     */
    public WalClaim claim(int type, int length, WalClaim claim) {
        return parts.writes.claim(type, length, claim);
    }

    /**
     * Waits until the record at {@code lsn} has reached {@code durability}.
     *
     * @throws IllegalLsnException when {@code lsn} is not below {@link #insertLsn()}
     * @throws WalFailedException  when the log is failed
     */
    public void awaitDurable(long lsn, Durability durability) {
        parts.writes.awaitDurable(lsn, durability);
    }

    // ------------------------------------------------------------------ read

    /** A reader from {@code fromLsn} that sees only flushed records. */
    public WalReader reader(long fromLsn) {
        return reader(fromLsn, WalReader.Visibility.FLUSHED);
    }

    /**
     * A reader from {@code fromLsn}: an LSN returned by an append, a record's {@code nextLsn()},
     * {@link #oldestLsn()} (or any LSN in the oldest segment's header, such as {@code 0/0} for a log never
     * truncated), or the current {@link #insertLsn()} to read only what comes next.
     *
     * @throws LsnRemovedException when {@code fromLsn} is below {@link #oldestLsn()}
     * @throws IllegalLsnException when {@code fromLsn} is beyond the insert position
     */
    public WalReader reader(long fromLsn, WalReader.Visibility visibility) {
        return parts.reads.reader(fromLsn, visibility);
    }

    // ------------------------------------------------------------------ positions

    /** What readers at {@code visibility} may see now (see ReadPath). */
    long visibleLsn(WalReader.Visibility visibility) {
        return parts.reads.visibleLsn(visibility);
    }

    /**
     * On a replica: everything below this was flushed by its primary, so it cannot be rewound, and readers see nothing
     * at or beyond it. {@code Long.MAX_VALUE} on a primary.
     */
    public long readLimit() {
        return parts.readLimit.get();
    }

    /** Where the next record will be reserved (PostgreSQL's insert position). */
    public long insertLsn() {
        return parts.tail.get();
    }

    /** Every record below this is complete in the mapped log. */
    public long writtenLsn() {
        return parts.written.get();
    }

    /** Every record below this has been forced to stable storage. */
    public long flushedLsn() {
        return parts.flushed.get();
    }

    /** The first record still kept: below it, reads fail with {@link LsnRemovedException}. */
    public long oldestLsn() {
        return parts.oldestLsn();
    }

    /**
     * Removes whole segments that lie entirely below {@code lsn}'s segment, recycling up to
     * {@code spareSegments} of them for future use. Never removes the segment holding the flushed position
     * or the last checkpoint's scan start, so it cannot remove unflushed records.
     */
    public void truncateBefore(long lsn) {
        parts.truncateBefore(lsn);
    }

    // ------------------------------------------------------------------ status

    public WalConfig config() {
        return parts.config;
    }

    public Path directory() {
        return parts.dir;
    }

    /** The random 64-bit identifier chosen when the log was created; every segment carries it. */
    public long logId() {
        return parts.logId;
    }

    public RecoveryReport recoveryReport() {
        return parts.report;
    }

    public int segmentCount() {
        return parts.registry.size();
    }

    /** The live segment files, oldest first (a snapshot; truncation may remove some at any time). */
    public List<SegmentInfo> segments() {
        return parts.segments();
    }

    /** Bytes of log kept, from the oldest record to the insert position. */
    public long retainedBytes() {
        return parts.tail.get() - oldestLsn();
    }

    public boolean isClosed() {
        return parts.writes.isClosed();
    }

    /** True once a force failed; appends are refused until the log is reopened. */
    public boolean isFailed() {
        return parts.commit.failure() != null;
    }

    /** Why the log failed (the failed call and its error, e.g. the force's IOException), or null while it has not. */
    public String failureReason() {
        WalFailedException f = parts.commit.failure();
        return f == null ? null : f.getMessage();
    }

    /**
     * The Micrometer meters of this log (names in {@link WalMetrics}); bind it to any registry:
     * {@code wal.meterBinder().bindTo(registry)}. Walden itself creates no registry.
     */
    public MeterBinder meterBinder() {
        return registry -> {
            parts.metrics.bindTo(registry);
            parts.cursors.lag.meterBinder().bindTo(registry);
        };
    }

    /** The archiver, when the log is archived ({@link WalConfig.Builder#archive}): its progress and status. */
    public Optional<Archiver> archiver() {
        return Optional.ofNullable(parts.archiver);
    }

    /** The log's named consumer cursors: durable, replicated, holding back truncation (see {@link Cursors}). */
    public Cursors cursors() {
        return parts.cursors;
    }

    /** A control record (a cursor change) at OFF: the caller waits for the durability it needs. */
    long appendControl(byte[] payload) {
        return parts.writes.appendControl(payload);
    }

    /** The log's own reader of control records (see ReadPath). */
    WalReader controlScanner(long from, long until, WalReader.ControlSink sink) {
        return parts.reads.controlScanner(from, until, sink);
    }

    /** Why local appends are refused (this log is a replica), or null when they are accepted. */
    public String appendsRefusedReason() {
        return parts.replication.refusal();
    }

    /** The epoch this log's appends are written in now (PostgreSQL's timeline): 1 until a promotion. */
    public int epoch() {
        return parts.replication.history().current().number();
    }

    /** The epochs this log went through, oldest first (docs/format.md, "Epoch history file"). */
    public EpochHistory history() {
        return parts.replication.history();
    }

    /**
     * The seam replication drives (for wal-replication and wal-server; applications need none of it): the role,
     * promotion, rewinds, the write stage of received bytes, what senders read. See {@link ReplicatedLog}.
     */
    public ReplicatedLog replication() {
        return parts.replication;
    }

    /** Total forces since open. */
    public long flushCount() {
        return parts.commit.flushCount();
    }

    /** Forces every written record now (as a durable append would). */
    public void flush() {
        parts.writes.flush();
    }

    /** The parts behind the facade, for this package's tests (a segment's mapping, the preparer's lock). */
    WalParts parts() {
        return parts;
    }

    // ------------------------------------------------------------------ close

    /**
     * Flushes every written record, writes a checkpoint, stops the background threads, unmaps the segments
     * and releases the directory. Idempotent. Appends started after close fail with {@link WalClosedException}.
     */
    @Override
    public void close() {
        parts.close();
    }

    @Override
    public String toString() {
        return "Wal{" + parts.dir + ", insert=" + Lsn.format(insertLsn()) + ", written=" + Lsn.format(writtenLsn())
                + ", flushed=" + Lsn.format(flushedLsn()) + ", oldest=" + Lsn.format(oldestLsn()) + "}";
    }
}
