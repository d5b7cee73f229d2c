package io.walden.core;

import io.micrometer.core.instrument.binder.MeterBinder;
import io.walden.core.internal.ChronicleSwitches;
import io.walden.core.internal.JvmAccess;
import io.walden.core.internal.LogPositions;
import io.walden.core.internal.ReadPath;
import io.walden.core.internal.TimeIndex;
import io.walden.core.internal.WalParts;
import io.walden.core.internal.WalReplication;
import io.walden.core.internal.WritePath;
import io.walden.core.internal.journal.StoreJournal;
import io.walden.core.internal.metrics.WalMetrics;
import io.walden.core.internal.recovery.ControlFile;
import io.walden.core.internal.recovery.LogOpener;
import io.walden.core.internal.segment.OpenSegments;
import io.walden.core.internal.commit.WalBuffersBudget;
import io.walden.core.internal.thread.BackgroundThreads;
import io.walden.core.replication.ReplicatedLog;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Instant;
import java.util.OptionalLong;
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
 * <p>Opening a log runs recovery ({@link WalStatus#recoveryReport()}); a second open of the same directory, from
 * this process or another, is refused with {@link WalLockedException}.
 */
public final class Wal implements AutoCloseable {

    static {
        ChronicleSwitches.apply();
    }

    /**
     * The log's parts and their lifetimes (start, close, truncation); this class is the facade over them, and holds
     * the few it is the front of below.
     */
    private final WalParts parts;
    private final WalConfig config;
    private final Path dir;
    /** Appends, claims, flushes and durability waits. */
    private final WritePath writes;
    /** Readers. */
    private final ReadPath reads;
    /** Where the log begins and ends. */
    private final LogPositions positions;
    /** Seek by time. */
    private final TimeIndex times;
    private final WalReplication replication;
    private final WalStatus status;
    private final NonWaitingAppends nonWaiting;
    private final Cursors cursors;

    private Wal(WalConfig config, LogOpener.OpenedLog opened, BackgroundThreads threads, OpenSegments files,
                WalBuffersBudget budget, boolean ownsThreads) {
        this.parts = new WalParts(config, opened, threads, files, budget, ownsThreads);
        this.config = config;
        this.dir = parts.directory();
        this.writes = parts.writes();
        this.reads = parts.reads();
        this.positions = parts.positions();
        this.times = parts.times();
        this.replication = parts.replication();
        this.status = new WalStatus(parts.status());
        this.nonWaiting = new NonWaitingAppends(writes, config.compression());
        this.cursors = new Cursors(parts.cursors());
    }

    // ------------------------------------------------------------------ open

    /**
     * Opens (or creates) the log in {@code config.directory()}, running recovery: finds the end of the
     * log from the last checkpoint, cuts off a torn tail, forces the repair and records a new checkpoint
     * before returning, so that nothing recovery did can be undone by a later crash.
     *
     * @throws WalLockedException    when another process or another Wal holds the directory
     * @throws WalCorruptedException when once-durable data fails validation (see {@link WalConfig.Builder#truncateAtCorruption})
     * @throws WalException          on any I/O error, with the cause, or when the JVM lacks the flags Walden needs
     *                               (the message names them)
     */
    public static Wal open(WalConfig config) {
        if (java.nio.file.Files.exists(config.directory().resolve(StoreJournal.KEY_FILE))) {
            // Its store's journal may hold records it acknowledged that its files lack until the store's open writes
            // them back: opened alone, it would seem to have lost them.
            throw new WalException("the log in " + config.directory() + " belongs to a store (it has a "
                    + StoreJournal.KEY_FILE + "): open it with WalStore.open on the store's directory");
        }
        return open(config, BackgroundThreads.own(), new OpenSegments(OpenSegments.DEFAULT_MAX_OPEN_FILES), null, true);
    }

    /**
     * {@link #open(WalConfig)}, its background jobs on {@code threads}, its open segment files counted in {@code
     * files} and its WAL buffers taken from {@code budget} (null: its own, always held): a store's logs share all three.
     */
    static Wal open(WalConfig config, BackgroundThreads threads, OpenSegments files, WalBuffersBudget budget,
                    boolean ownsThreads) {
        return open(config, threads, files, budget, ownsThreads, Long.MAX_VALUE);
    }

    /**
     * {@link #open(WalConfig, BackgroundThreads, OpenSegments, WalBuffersBudget, boolean)} of a store's log closed a
     * moment ago to take new settings ({@link WalStore#reconfigure}): its retention keeps what replication needed kept
     * then ({@code replicationFloor}, see {@link #replicationFloor}) from its first look, which comes as it starts,
     * until replication gives the reopened log its own floor (its slots, read back from the log's directory).
     */
    static Wal open(WalConfig config, BackgroundThreads threads, OpenSegments files, WalBuffersBudget budget,
                    boolean ownsThreads, long replicationFloor) {
        JvmAccess.check();
        try {
            Wal wal = new Wal(config, LogOpener.open(config), threads, files, budget, ownsThreads);
            if (replicationFloor != Long.MAX_VALUE) {
                wal.replication.retentionFloor(() -> replicationFloor); // before retention starts
            }
            wal.parts.start();
            return wal;
        } catch (RuntimeException | Error e) {
            if (ownsThreads) {
                threads.close(); // what a failed open may have started (its clock, at a recovery's read of it) ends here
            }
            throw e;
        }
    }


    /** Whether {@code dir} holds a log (its control file), without opening it. */
    public static boolean exists(Path dir) {
        return ControlFile.exists(dir);
    }

    /**
     * The segment size of the log in {@code dir} (a log's segment size never changes), without opening it; empty when
     * there is no log there, or its control file cannot be read ({@link #open} then says why).
     */
    public static OptionalLong segmentSizeOf(Path dir) {
        if (!ControlFile.exists(dir)) {
            return OptionalLong.empty();
        }
        try (ControlFile control = ControlFile.open(dir)) {
            return OptionalLong.of(control.read().segmentSize());
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty();
        }
    }

    // ------------------------------------------------------------------ append (WritePath)

    /** Appends with the configured default durability; returns the record's LSN once that level is reached. */
    public long append(byte[] payload) {
        return append(0, payload, 0, payload.length, config.durability());
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
        return append(type, payload, offset, length, durability, config.compression());
    }

    /**
     * {@link #append(int, byte[], int, int, Durability)}, stored with {@code compression} when that saves space
     * (readers get the original bytes back either way; see {@link Compression}).
     */
    public long append(int type, byte[] payload, int offset, int length, Durability durability, Compression compression) {
        return writes.append(type, payload, offset, length, durability, compression);
    }

    /**
     * Appends the remaining bytes of {@code payload} (its position is not moved). Heap or direct: the bytes are copied
     * once, into the log's buffers, and nothing is allocated (so a server appends straight from its network buffers,
     * e.g. a Netty {@code ByteBuf.nioBuffer()} view, with no copy of its own). The buffer may be reused once this returns.
     */
    public long append(int type, ByteBuffer payload, Durability durability) {
        return append(type, payload, durability, config.compression());
    }

    /** {@link #append(int, ByteBuffer, Durability)}, stored with {@code compression} when that saves space. */
    public long append(int type, ByteBuffer payload, Durability durability, Compression compression) {
        return writes.append(type, payload, durability, compression);
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
        return writes.appendAsync(type, payload, durability);
    }

    /**
     * {@link #appendAsync(int, byte[], Durability)} for the remaining bytes of a buffer (its position is not moved;
     * the bytes are copied into the log before this returns, so the buffer may be reused or released at once).
     */
    public CompletableFuture<Long> appendAsync(int type, ByteBuffer payload, Durability durability) {
        return appendAsync(type, payload, durability, config.compression());
    }

    /** {@link #appendAsync(int, ByteBuffer, Durability)}, stored with {@code compression} when that saves space. */
    public CompletableFuture<Long> appendAsync(int type, ByteBuffer payload, Durability durability, Compression compression) {
        return writes.appendAsync(type, payload, durability, compression);
    }

    /**
     * Appends for a thread that must never wait (an event loop): they return at once when an append would wait, and
     * flush a batch once (see {@link NonWaitingAppends}).
     */
    public NonWaitingAppends nonWaiting() {
        return nonWaiting;
    }

    /**
     * Reserves a record of {@code length} payload bytes for zero-copy writing through {@code claim}.
     * The claim must be committed or aborted promptly (see {@link WalClaim}).
     */
    public WalClaim claim(int type, int length, WalClaim claim) {
        writes.claim(type, length, claim.slot());
        claim.opened();
        return claim;
    }

    /**
     * Waits until the record at {@code lsn} has reached {@code durability}.
     *
     * @throws IllegalLsnException when {@code lsn} is not below {@link #insertLsn()}
     * @throws WalFailedException  when the log is failed
     */
    public void awaitDurable(long lsn, Durability durability) {
        writes.awaitDurable(lsn, durability);
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
        return new WalReader(reads.reader(fromLsn, visibility));
    }

    /**
     * A reader from the first record whose time is at or after {@code from} ({@link #lsnAt}): "the records since
     * 10:00".
     */
    public WalReader reader(Instant from, WalReader.Visibility visibility) {
        return reader(lsnAt(from), visibility);
    }

    /** {@link #reader(Instant, WalReader.Visibility)} of flushed records. */
    public WalReader reader(Instant from) {
        return reader(from, WalReader.Visibility.FLUSHED);
    }

    /**
     * The LSN of the first record whose time ({@link WalRecord#timestamp()}) is at or after {@code time}; when no record
     * is that recent, the insert LSN (precisely: the end of what is written, which is the insert LSN once appends in
     * flight are in the files). O(log segments) record headers and a page or two of one segment, never a scan of the
     * log (docs/format.md, "Finding a record by time"). Records without a time (written before format 2) count as older
     * than any time. The answer may be one of the log's own records (a dictionary copy, a cursor change), which readers
     * skip: a reader from it returns the first application record at or after {@code time}.
     *
     * @throws IllegalArgumentException when {@code time} is outside what a record time holds ({@link RecordTime#MIN} to
     *                                  {@link RecordTime#MAX}), naming that range
     */
    public long lsnAt(Instant time) {
        return times.lsnAt(RecordTime.toMicros(time));
    }

    // ------------------------------------------------------------------ positions

    /**
     * On a replica: everything below this was flushed by its primary, so it cannot be rewound, and readers see nothing
     * at or beyond it. {@code Long.MAX_VALUE} on a primary.
     */
    public long readLimit() {
        return positions.readLimit();
    }

    /** Where the next record will be reserved (PostgreSQL's insert position). */
    public long insertLsn() {
        return positions.insertLsn();
    }

    /** Every record below this is complete in the mapped log. */
    public long writtenLsn() {
        return positions.writtenLsn();
    }

    /** Every record below this has been forced to stable storage. */
    public long flushedLsn() {
        return positions.flushedLsn();
    }

    /** The first record still kept: below it, reads fail with {@link LsnRemovedException}. */
    public long oldestLsn() {
        return positions.oldestLsn();
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
        return config;
    }

    public Path directory() {
        return dir;
    }

    /** Identity, recovery, segments, failure, role and epoch, archiving: what operators read (see {@link WalStatus}). */
    public WalStatus status() {
        return status;
    }

    public boolean isClosed() {
        return writes.isClosed();
    }

    /**
     * The Micrometer meters of this log (names in {@link WalMetrics}); bind it to any registry:
     * {@code wal.meterBinder().bindTo(registry)}. Walden itself creates no registry.
     */
    public MeterBinder meterBinder() {
        return parts.meterBinder();
    }

    /** The log's named consumer cursors: durable, replicated, holding back truncation (see {@link Cursors}). */
    public Cursors cursors() {
        return cursors;
    }

    /**
     * The seam replication drives (for wal-replication and wal-server; applications need none of it): the role,
     * promotion, rewinds, the write stage of received bytes, what senders read. See {@link ReplicatedLog}.
     */
    public ReplicatedLog replication() {
        return replication;
    }

    /** What replication needs this log to keep now ({@link ReplicatedLog#retentionFloor}; MAX_VALUE: nothing). */
    long replicationFloor() {
        return replication.retentionFloor();
    }

    /** Forces every written record now (as a durable append would). */
    public void flush() {
        writes.flush();
    }

    /**
     * The parts behind the facade: for the store, which makes its journal from the journal log's parts, and for this
     * package's tests (a segment's mapping, the preparer's lock: through PartsForTests).
     */
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
        return "Wal{" + dir + ", insert=" + Lsn.format(insertLsn()) + ", written=" + Lsn.format(writtenLsn())
                + ", flushed=" + Lsn.format(flushedLsn()) + ", oldest=" + Lsn.format(oldestLsn()) + "}";
    }
}
