package io.walden.core;

import io.walden.core.archive.ArchiveConfig;
import io.walden.core.archive.Archiver;
import io.walden.core.commit.Activity;
import io.walden.core.commit.Appender;
import io.walden.core.commit.FlushObserver;
import io.walden.core.commit.GroupCommit;
import io.walden.core.commit.Position;
import io.walden.core.commit.ReadNotifier;
import io.walden.core.commit.WalBuffers;
import io.walden.core.commit.RemoteWaits;
import io.walden.core.record.RecordDescriptor;
import io.walden.core.metrics.WalMetrics;
import io.walden.core.metrics.WalStats;
import io.walden.core.recovery.Checkpointer;
import io.walden.core.recovery.LogOpener;
import io.walden.core.recovery.ControlFile;
import io.walden.core.recovery.RecoveryScanner;
import io.walden.core.replication.ReplicatedLog;
import io.walden.core.segment.Segment;
import io.walden.core.segment.SegmentFiles;
import io.walden.core.segment.SegmentHeaderDescriptor;
import io.walden.core.segment.SegmentPreparer;
import io.walden.core.segment.SegmentRegistry;
import io.walden.core.sync.BackgroundWriter;
import io.walden.core.sync.SyncStrategy;
import io.micrometer.core.instrument.binder.MeterBinder;
import net.openhft.chronicle.bytes.BytesStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

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
    private static final Logger LOG = LoggerFactory.getLogger(Wal.class);
    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    static {
        ChronicleSettings.apply();
    }

    private final WalConfig config;
    private final Path dir;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final long logId;
    private final ControlFile controlFile;
    private final SegmentRegistry registry;
    private final SegmentPreparer preparer;
    private final Position tail;
    /** The end of the records published in the WAL buffers (appenders move it; the flush leader writes up to it). */
    private final Position published;
    /** The end of what the segment files hold: readers, boundary proofs and senders read the files below it. */
    private final Position written;
    /** The WAL buffers: appenders copy records here; the flush leader writes them into the files. */
    private final WalBuffers ring;
    private final Position flushed;
    private final ReadNotifier notifier = new ReadNotifier();
    private final Appender appender;
    private final GroupCommit commit;
    private final BackgroundWriter writer;
    private final Checkpointer checkpointer;
    private final SyncStrategy sync;
    private final RecoveryReport report;
    private final int maxPayload;
    private final WalStats stats = new WalStats();
    /** Who is inside the log: close() waits for them, truncation's grace periods too (see Activity). */
    private final Activity activity = new Activity();
    private final RemoteWaits remote;
    private final WalMetrics metrics;
    private final Cursors cursors;
    private final Object adminLock = new Object();
    /** The side replication drives: the role (appends refused on a replica), the epoch history, rewinds. */
    private final WalReplication replication;
    /** Admission, the copy into the WAL buffers and each append's durability wait. */
    private final WritePath writes;
    /** Archives sealed segments and holds truncation back for them; null when the log is not archived. */
    private final Archiver archiver;
    /**
     * A replica's read limit: its primary had flushed everything below it; readers, appliers and cascading senders see
     * nothing at or beyond it (it may still be rewound). {@code Long.MAX_VALUE} for a primary's log. Moved forward by
     * the replica's receiver, back only by {@link #rewindTo}, both under the admin lock; persisted with checkpoints.
     */
    private final Position readLimit;

    private Wal(WalConfig config, LogOpener.OpenedLog opened) {
        this.config = config;
        this.dir = opened.dir();
        this.lockChannel = opened.lockChannel();
        this.lock = opened.lock();
        this.logId = opened.logId();
        this.controlFile = opened.controlFile();
        this.registry = opened.registry();
        RecoveryScanner.Result scan = opened.scan();
        ControlFile.Checkpoint after = opened.after();
        this.maxPayload = config.maxPayloadSize();
        this.remote = new RemoteWaits(config.remoteCommitTimeout().toNanos());
        this.sync = config.syncStrategy() != null ? config.syncStrategy() : SyncStrategy.of(config.syncMethod());
        long end = scan.endLsn();
        this.tail = new Position(end);
        this.published = new Position(end);
        this.written = new Position(end);
        this.ring = WalBuffers.allocate(config.walBuffers(), config.segmentSize(),
                RecordDescriptor.aligned(RecordDescriptor.recordLength(config.maxPayloadSize())));
        this.flushed = new Position(end);
        Map<Long, Long> firstPrev = new ConcurrentHashMap<>(scan.firstPrevBySegment());
        firstPrev.put(after.scanStart(), after.scanStartPrev());
        this.preparer = new SegmentPreparer(dir, config.segmentSize(), logId, registry, config.spareSegments(),
                opened.spares(), activity::gracePeriod, e -> failFromBackground("the segment preparer failed: " + e, e));
        this.appender = new Appender(registry, preparer, ring, tail, published, written, notifier, firstPrev,
                scan.lastRecordLsn(), stats);
        this.commit = new GroupCommit(appender, published, written, flushed, registry, sync, notifier,
                config.commitDelay().toNanos(), config.commitSiblings());
        this.readLimit = new Position(after.readLimit());
        this.checkpointer = new Checkpointer(controlFile, registry, flushed, firstPrev, logId, after.scanStart(), sync.durable(),
                readLimit::get);
        this.cursors = new Cursors(this); // before the writer, whose periodic task samples for them
        this.archiver = config.archive() == null ? null : newArchiver(config.archive());
        this.replication = new WalReplication(this, new WalReplication.Parts(config, dir, adminLock, activity, commit,
                checkpointer, appender, preparer, registry, notifier, cursors, remote, tail, written, flushed, readLimit,
                opened.history(), opened.shutDownCleanly()));
        this.writer = new BackgroundWriter(commit, activity, config.writerDelay().toNanos(), config.offWriteDelay().toNanos(),
                config.checkpointInterval().toNanos(),
                () -> {
                    checkpointer.checkpoint();
                    cursors.tick(); // when the end passed which LSN: the cursors' lag in time
                });
        this.writes = new WritePath(config, dir, activity, appender, ring, commit, writer, remote, replication, tail, flushed);
        this.metrics = new WalMetrics(this, stats, new WalMetrics.Sources() {
            @Override
            public long flushCount() {
                return commit.flushCount();
            }

            @Override
            public long recycledSegments() {
                return preparer.recycledCount();
            }

            @Override
            public void flushObserver(FlushObserver observer) {
                commit.observer(observer);
            }
        });
        this.report = new RecoveryReport(opened.created(), opened.rebuilt(), scan.scanStart(), end, Math.max(Lsn.INVALID, scan.lastRecordLsn()),
                scan.records(), scan.segments(), scan.bytesCut(), scan.firstBadLsn(), scan.reason(), scan.truncatedCorruption(),
                System.nanoTime() - opened.startNanos(), opened.shutDownCleanly());
    }

    private Archiver newArchiver(ArchiveConfig archive) {
        try {
            return new Archiver(new ArchivedWal(this, reason -> writes.blockAppends(reason)), archive);
        } catch (IOException e) {
            throw new WalException("could not read the archive status in " + dir + ": " + e.getMessage(), e);
        }
    }

    /** A background thread that owns progress hit an Error: the log fails loudly rather than hang "ready". */
    private void failFromBackground(String what, Throwable cause) {
        GroupCommit c = commit;
        if (c != null) {
            c.fail(what, cause);
        }
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
        wal.start();
        return wal;
    }

    private void start() {
        if (config.newEpochAfterCrash() && !report.shutDownCleanly()) {
            replication.beginEpochAfterCrash();
        }
        if (!sync.durable()) {
            LOG.warn("Walden log {} uses sync method NONE: NOTHING appended to it is durable across a power failure "
                    + "or OS crash, whatever durability an append asks for", dir);
        }
        try {
            cursors.open();
        } catch (IOException e) {
            throw new WalException("could not read the cursor files in " + dir + ": " + e.getMessage(), e);
        }
        preparer.start();
        preparer.request(registry.segmentStart(tail.get()) + config.segmentSize());
        writer.start();
        if (archiver != null) {
            archiver.start();
        }
        if (report.repaired()) {
            LOG.warn("Opened Walden log {}: {}", dir, report);
        } else {
            LOG.info("Opened Walden log {}: {}", dir, report);
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

    /** Appends the remaining bytes of {@code payload} (its position is not moved). */
    public long append(int type, ByteBuffer payload, Durability durability) {
        return append(type, payload, durability, config.compression());
    }

    /** {@link #append(int, ByteBuffer, Durability)}, stored with {@code compression} when that saves space. */
    public long append(int type, ByteBuffer payload, Durability durability, Compression compression) {
        return writes.append(type, payload, durability, compression);
    }

    /** Appends the readable bytes of a Chronicle {@link BytesStore} (from its read position, for its read remaining). */
    public long append(int type, BytesStore<?, ?> payload, Durability durability) {
        return writes.append(type, payload, durability);
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
     * {@link #appendAsync(int, ByteBuffer, Durability)} for a thread that must never wait (an event loop): returns
     * null, with nothing appended, when the record needs the next segment and the segment preparer has not made it
     * ready yet (at a roll, while a new segment is zero-filled), or room in WAL buffers full of records not yet
     * written. Append from a thread that may wait then.
     */
    public CompletableFuture<Long> tryAppendAsync(int type, ByteBuffer payload, Durability durability) {
        return tryAppendAsync(type, payload, durability, config.compression());
    }

    /** {@link #tryAppendAsync(int, ByteBuffer, Durability)}, stored with {@code compression} when that saves space. */
    public CompletableFuture<Long> tryAppendAsync(int type, ByteBuffer payload, Durability durability, Compression compression) {
        return writes.tryAppendAsync(type, payload, durability, compression);
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
        return tryAppend(type, payload, durability, config.compression(), completion);
    }

    /** {@link #tryAppend(int, ByteBuffer, Durability, AppendCompletion)}, stored with {@code compression} when that saves space. */
    public boolean tryAppend(int type, ByteBuffer payload, Durability durability, Compression compression,
                             AppendCompletion completion) {
        return writes.tryAppend(type, payload, durability, compression, completion);
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
        return writes.flushIfIdle();
    }

    /** Asks the background writer to flush what is published (for {@link #tryAppend}): no thread waits. */
    public void requestFlush() {
        writes.requestFlush();
    }

    /**
     * Reserves a record of {@code length} payload bytes for zero-copy writing through {@code claim}.
     * The claim must be committed or aborted promptly (see {@link WalClaim}).
     */
    public WalClaim claim(int type, int length, WalClaim claim) {
        return writes.claim(type, length, claim);
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
        ensureOpen();
        long oldest = oldestLsn();
        Segment first = registry.oldest();
        if (first != null && fromLsn >= first.startLsn() && fromLsn < oldest) {
            fromLsn = oldest; // inside the oldest segment's header: the log starts right after it
        }
        if (fromLsn < oldest) {
            throw new LsnRemovedException(fromLsn, oldest);
        }
        long insert = tail.get();
        if (fromLsn > insert) {
            throw new IllegalLsnException("LSN " + Lsn.format(fromLsn) + " is beyond the end of the log ("
                    + Lsn.format(insert) + ")");
        }
        long from = ReadStart.pastHeader(fromLsn, config.segmentSize());
        long expectedPrev = ReadStart.expectedPrev(registry, from, written.get(), insert, oldest);
        return new WalReader(this, from, expectedPrev, visibility);
    }

    /** For a reader that started beyond the written position: proves its start once it is written (see ReadStart). */
    long expectedPrevAt(long lsn) {
        return ReadStart.expectedPrev(registry, lsn, written.get(), tail.get(), oldestLsn());
    }

    // ------------------------------------------------------------------ positions

    /**
     * What readers at {@code visibility} may see now: below the written or flushed position, and, on a replica, below
     * what its primary has flushed ({@link #readLimit()}).
     */
    long visibleLsn(WalReader.Visibility visibility) {
        long end = visibility == WalReader.Visibility.WRITTEN ? written.get() : flushed.get();
        return Math.min(end, readLimit.get());
    }

    /**
     * On a replica: everything below this was flushed by its primary, so it cannot be rewound, and readers see nothing
     * at or beyond it. {@code Long.MAX_VALUE} on a primary.
     */
    public long readLimit() {
        return readLimit.get();
    }

    /** Where the next record will be reserved (PostgreSQL's insert position). */
    public long insertLsn() {
        return tail.get();
    }

    /** Every record below this is complete in the mapped log. */
    public long writtenLsn() {
        return written.get();
    }

    /** Every record below this has been forced to stable storage. */
    public long flushedLsn() {
        return flushed.get();
    }

    /** The first record still kept: below it, reads fail with {@link LsnRemovedException}. */
    public long oldestLsn() {
        Segment s = registry.oldest();
        return s == null ? tail.get() : s.startLsn() + SegmentHeaderDescriptor.LENGTH;
    }

    /**
     * Removes whole segments that lie entirely below {@code lsn}'s segment, recycling up to
     * {@code spareSegments} of them for future use. Never removes the segment holding the flushed position
     * or the last checkpoint's scan start, so it cannot remove unflushed records.
     */
    public void truncateBefore(long lsn) {
        synchronized (adminLock) {
            ensureOpen();
            try {
                checkpointer.write(true);
            } catch (IOException e) {
                throw new WalException("could not write a checkpoint before truncating: " + e.getMessage(), e);
            }
            long keep = Math.min(Math.min(Math.min(lsn, flushed.get()), replication.retentionFloor()), cursors.retentionFloor());
            if (archiver != null) {
                keep = Math.min(keep, archiver.retentionFloor()); // never a segment the archive does not hold yet
            }
            long limit = Math.min(registry.segmentStart(keep), checkpointer.durableScanStart());
            Segment oldestSegment = registry.oldest();
            if (oldestSegment != null && oldestSegment.endLsn() <= limit) {
                try {
                    cursors.beforeTruncation(limit); // the control records about to go: into the base cursor file
                } catch (IOException e) {
                    throw new WalException("could not write the cursor file before truncating: " + e.getMessage(), e);
                }
            }
            for (Segment s : registry.snapshot()) {
                if (s.endLsn() > limit) {
                    break;
                }
                Path retiredFile = dir.resolve(s.path().getFileName() + SegmentFiles.RETIRED_SUFFIX);
                try {
                    // Out of the log at once (a crash from here on never brings it back); the mapping stays
                    // valid for whoever still reads it, and is released after the grace period.
                    SegmentFiles.rename(dir, s.path(), retiredFile);
                } catch (IOException e) {
                    throw new WalException("could not remove segment " + s.path() + ": " + e.getMessage(), e);
                }
                registry.remove(s);
                preparer.retire(s, retiredFile);
                LOG.debug("Truncated segment {}", s.path().getFileName());
            }
            cursors.afterTruncation();
        }
    }

    // ------------------------------------------------------------------ status

    public WalConfig config() {
        return config;
    }

    public Path directory() {
        return dir;
    }

    /** The random 64-bit identifier chosen when the log was created; every segment carries it. */
    public long logId() {
        return logId;
    }

    public RecoveryReport recoveryReport() {
        return report;
    }

    public int segmentCount() {
        return registry.size();
    }

    /** The live segment files, oldest first (a snapshot; truncation may remove some at any time). */
    public List<SegmentInfo> segments() {
        List<SegmentInfo> out = new ArrayList<>();
        for (Segment s : registry.snapshot()) {
            out.add(new SegmentInfo(s.startLsn(), s.endLsn(), s.path()));
        }
        return out;
    }

    /** Bytes of log kept, from the oldest record to the insert position. */
    public long retainedBytes() {
        return tail.get() - oldestLsn();
    }

    public boolean isClosed() {
        return writes.isClosed();
    }

    /** True once a force failed; appends are refused until the log is reopened. */
    public boolean isFailed() {
        return commit.failure() != null;
    }

    /** Why the log failed (the failed call and its error, e.g. the force's IOException), or null while it has not. */
    public String failureReason() {
        WalFailedException f = commit.failure();
        return f == null ? null : f.getMessage();
    }

    /**
     * The Micrometer meters of this log (names in {@link WalMetrics}); bind it to any registry:
     * {@code wal.meterBinder().bindTo(registry)}. Walden itself creates no registry.
     */
    public MeterBinder meterBinder() {
        return registry -> {
            metrics.bindTo(registry);
            cursors.meterBinder().bindTo(registry);
        };
    }

    /** The archiver, when the log is archived ({@link WalConfig.Builder#archive}): its progress and status. */
    public Optional<Archiver> archiver() {
        return Optional.ofNullable(archiver);
    }

    /** The log's named consumer cursors: durable, replicated, holding back truncation (see {@link Cursors}). */
    public Cursors cursors() {
        return cursors;
    }

    /** A control record (a cursor change) at OFF: the caller waits for the durability it needs. */
    long appendControl(byte[] payload) {
        return writes.appendControl(payload);
    }

    /** The log's own reader of control records from {@code from} to {@code until}, past a replica's read limit. */
    WalReader controlScanner(long from, long until, WalReader.ControlSink sink) {
        ensureOpen();
        long oldest = oldestLsn();
        long insert = tail.get();
        long start = Math.min(Math.max(from, oldest), insert);
        start = ReadStart.pastHeader(start, config.segmentSize());
        long expectedPrev = start >= insert ? ReadStart.ANY_PREV : ReadStart.expectedPrev(registry, start, written.get(), insert, oldest);
        return new WalReader(this, start, expectedPrev, WalReader.Visibility.WRITTEN, until, sink);
    }

    /** Why local appends are refused (this log is a replica), or null when they are accepted. */
    public String appendsRefusedReason() {
        return replication.refusal();
    }

    /** The epoch this log's appends are written in now (PostgreSQL's timeline): 1 until a promotion. */
    public int epoch() {
        return replication.history().current().number();
    }

    /** The epochs this log went through, oldest first (docs/format.md, "Epoch history file"). */
    public EpochHistory history() {
        return replication.history();
    }

    /**
     * The seam replication drives (for wal-replication and wal-server; applications need none of it): the role,
     * promotion, rewinds, the write stage of received bytes, what senders read. See {@link ReplicatedLog}.
     */
    public ReplicatedLog replication() {
        return replication;
    }

    /** Total forces since open. */
    public long flushCount() {
        return commit.flushCount();
    }

    /** Forces every written record now (as a durable append would). */
    public void flush() {
        writes.flush();
    }

    // ------------------------------------------------------------------ internals for readers, claims and meters

    SegmentRegistry registry() {
        return registry;
    }

    ReadNotifier notifier() {
        return notifier;
    }

    GroupCommit groupCommit() {
        return commit;
    }

    SegmentPreparer preparer() {
        return preparer;
    }

    void ensureOpen() {
        writes.ensureOpen();
    }

    // ------------------------------------------------------------------ close

    /**
     * Flushes every written record, writes a checkpoint, stops the background threads, unmaps the segments
     * and releases the directory. Idempotent. Appends started after close fail with {@link WalClosedException}.
     */
    @Override
    public void close() {
        synchronized (adminLock) {
            if (writes.isClosed()) {
                return;
            }
            if (activity.callerInside()) {
                throw new IllegalStateException("close() called from inside an append, commit callback or claim of this "
                        + "log: it would wait for itself; close it from another thread");
            }
            writes.close(); // from now on every entry is refused (see WritePath.enter())
            if (archiver != null) {
                archiver.close(); // first: it reads segment files that are unmapped below
            }
            remote.fail("the log in " + dir.getFileName() + " is closing");
            writer.close();
            boolean quiescent = activity.awaitNoneInside(CLOSE_WAIT_NANOS, TimeUnit.NANOSECONDS);
            if (!quiescent) {
                LOG.error("Closing {} while appends, commits or claims are still in progress after {} s: the segments "
                        + "stay mapped and the directory stays locked until this process exits, so that a late claim "
                        + "can neither fault nor write into a log reopened by someone else", dir,
                        TimeUnit.NANOSECONDS.toSeconds(CLOSE_WAIT_NANOS));
            }
            List<Throwable> problems = new ArrayList<>();
            try {
                if (commit.failure() == null) {
                    commit.flushAll();
                    cursors.close();
                    if (quiescent && flushed.get() >= tail.get()) {
                        checkpointer.writeShutdown(); // everything appended is flushed: no replica can hold more
                    } else {
                        checkpointer.write(true);
                    }
                } else {
                    commit.completeAsync();
                }
            } catch (IOException | RuntimeException e) {
                problems.add(e);
            }
            preparer.close();
            notifier.signal();
            if (quiescent) {
                ring.free(); // no one is inside: no appender can touch the ring again
                for (Segment s : registry.snapshot()) {
                    registry.remove(s);
                    s.retire();
                }
                try {
                    controlFile.close();
                    lock.release();
                    lockChannel.close();
                } catch (IOException e) {
                    problems.add(e);
                }
            }
            LOG.info("Closed Walden log {} at {}", dir, Lsn.format(flushed.get()));
            if (!problems.isEmpty()) {
                Throwable first = problems.get(0);
                if (first instanceof WalFailedException) {
                    throw (WalFailedException) first;
                }
                throw new WalException("closing the log in " + dir + " failed: " + first.getMessage(),
                        first instanceof IOException ? new UncheckedIOException((IOException) first) : first);
            }
        }
    }

    @Override
    public String toString() {
        return "Wal{" + dir + ", insert=" + Lsn.format(insertLsn()) + ", written=" + Lsn.format(writtenLsn())
                + ", flushed=" + Lsn.format(flushedLsn()) + ", oldest=" + Lsn.format(oldestLsn()) + "}";
    }
}
