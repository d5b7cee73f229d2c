package io.walden.core.internal;

import io.micrometer.core.instrument.binder.MeterBinder;
import io.walden.core.Lsn;
import io.walden.core.RecoveryReport;
import io.walden.core.WalConfig;
import io.walden.core.WalException;
import io.walden.core.WalFailedException;
import io.walden.core.archive.ArchiveConfig;
import io.walden.core.internal.archive.Archiver;
import io.walden.core.internal.commit.Activity;
import io.walden.core.internal.commit.Appender;
import io.walden.core.internal.commit.GroupCommit;
import io.walden.core.internal.commit.Position;
import io.walden.core.internal.commit.ReadNotifier;
import io.walden.core.internal.commit.RecordClock;
import io.walden.core.internal.commit.RemoteWaits;
import io.walden.core.internal.commit.WalBuffers;
import io.walden.core.internal.commit.WalBuffersBudget;
import io.walden.core.internal.cursor.CursorBook;
import io.walden.core.internal.metrics.WalMetrics;
import io.walden.core.internal.metrics.WalStats;
import io.walden.core.internal.record.DictionaryTrainer;
import io.walden.core.internal.record.RecordCursor;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.recovery.Checkpointer;
import io.walden.core.internal.recovery.ControlFile;
import io.walden.core.internal.recovery.LogOpener;
import io.walden.core.internal.recovery.RecoveryScanner;
import io.walden.core.internal.retention.Retention;
import io.walden.core.internal.segment.OpenSegments;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.segment.SegmentLinks;
import io.walden.core.internal.segment.SegmentPreparer;
import io.walden.core.internal.segment.SegmentRegistry;
import io.walden.core.internal.sync.BackgroundWriter;
import io.walden.core.internal.sync.SyncOverride;
import io.walden.core.internal.sync.SyncStrategy;
import io.walden.core.internal.thread.BackgroundThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The composition root of one open {@link Wal}: makes its parts and wires them, and owns the order they start and stop
 * in: recovery's result wired into the positions, the WAL buffers, the appender, group commit, the background writer,
 * the checkpointer, the cursors, the archiver, the replication side and the write path. Each part gets at
 * construction what it uses: the parts it calls, or a narrow interface it declares for the calls into the rest of the
 * log ({@link Retention.Log}, {@link WalReplication.Log}, {@link CursorBook.Log}), which an adapter here implements
 * ({@link RetainedLog}, {@link ReplicationLog}, {@link CursorLog}). Nothing outside reads its fields: {@code Wal}, the
 * facade, gets the few parts it is the front of through the accessors below, and this class keeps the lifetimes and
 * the truncation that spans several parts.
 *
 * <p>Thread-safety: the parts are final and safely published by {@link Wal#open}; {@link #truncateBefore} and
 * {@link #close} serialise on {@code adminLock}.
 */
public final class WalParts {
    private static final Logger LOG = LoggerFactory.getLogger(WalParts.class);
    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final WalConfig config;
    /** Where the background jobs run: threads of this log's own, or its store's. */
    private final BackgroundThreads threads;
    private final boolean ownsThreads;
    /** The store's open segment files (or this log's own count of them), and this log's entry in it. */
    private final OpenSegments openFiles;
    /** Set once the log started (the last step of {@link #start}); read by the periodic turn and close. */
    private volatile OpenSegments.Log openFilesEntry;
    private final Path dir;
    /** The directory's lock and the control file: held from open to close. */
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final ControlFile controlFile;
    private final SegmentRegistry registry;
    private final SegmentPreparer preparer;
    private final Position insert;
    /** The end of what the segment files hold: readers, boundary proofs and senders read the files below it. */
    private final Position written;
    /** The WAL buffers: appenders copy records here; the flush leader writes them into the files. */
    private final WalBuffers ring;
    private final Position flushed;
    /**
     * A replica's read limit: its primary had flushed everything below it; readers, appliers and cascading senders see
     * nothing at or beyond it (it may still be rewound). {@code Long.MAX_VALUE} for a primary's log. Moved forward by
     * the replica's receiver, back only by {@link WalReplication#rewindTo}, both under the admin lock; persisted with checkpoints.
     */
    private final Position readLimit;
    /** Where the log begins and ends, read-only: what the parts that only look at its extent are given. */
    private final LogPositions positions;
    private final ReadNotifier notifier = new ReadNotifier();
    private final Appender appender;
    /** The writer's zstd dictionary (sampled and trained after open). */
    private final DictionaryTrainer dictionaries;
    private final GroupCommit commit;
    private final BackgroundWriter writer;
    private final Checkpointer checkpointer;
    private final SyncStrategy sync;
    private final RecoveryReport report;
    /** Who is inside the log: close() waits for them, truncation's grace periods too (see Activity). */
    private final Activity activity = new Activity();
    private final RemoteWaits remote;
    private final WalMetrics metrics;
    private final CursorBook cursors;
    /** Serialises truncation, close and the replication side's role changes, rewinds and applied bytes. */
    private final Object adminLock = new Object();
    /** The side replication drives: the role (appends refused on a replica), the epoch history, rewinds. */
    private final WalReplication replication;
    /** Admission, the copy into the WAL buffers and each append's durability wait. */
    private final WritePath writes;
    /** All a reader sees of the log. */
    private final ReadPath reads;
    /** Gives an idle log's WAL buffers' memory back to the system, and takes it again at the next append. */
    private final IdleRing idleRing;
    /** Seek by time. */
    private final TimeIndex times;
    /** Removes old segments by time and size (retention-time, retention-bytes); idle when neither is set. */
    private final Retention retention;
    /** Archives sealed segments and holds truncation back for them; null when the log is not archived. */
    private final Archiver archiver;
    /** What the group's archive holds as far as this log knows: what truncation keeps for it, on every role. */
    private final ArchiveFloor archiveFloor;
    private final SegmentTruncation truncation;
    /** What operators read: the status and the meters. */
    private final StatusSources status;

    /**
     * @param threads     where the background jobs run (see {@link BackgroundThreads})
     * @param openFiles   the cap on open segment files this log's sealed segments count in (see {@link OpenSegments})
     * @param budget      the store's budget of WAL buffers this log's ring takes from while awake, or null (its own)
     * @param ownsThreads whether this log closes them (its own), or a store does (shared)
     */
    public WalParts(WalConfig config, LogOpener.OpenedLog opened, BackgroundThreads threads, OpenSegments openFiles,
                    WalBuffersBudget budget, boolean ownsThreads) {
        this.config = config;
        this.threads = threads;
        this.openFiles = openFiles;
        this.ownsThreads = ownsThreads;
        this.dir = opened.dir();
        this.lockChannel = opened.lockChannel();
        this.lock = opened.lock();
        long logId = opened.logId();
        this.controlFile = opened.controlFile();
        this.registry = opened.registry();
        RecoveryScanner.Result scan = opened.scan();
        ControlFile.Checkpoint after = opened.after();
        this.remote = new RemoteWaits(config.remoteCommitTimeout().toNanos(), threads);
        this.sync = SyncOverride.of(config);
        long end = scan.endLsn();
        this.insert = new Position(end);
        // The end of the records published in the WAL buffers (appenders move it; the flush leader writes up to it).
        Position published = new Position(end);
        this.written = new Position(end);
        this.ring = WalBuffers.allocate(config.walBuffers(), config.segmentSize(),
                RecordDescriptor.aligned(RecordDescriptor.recordLength(config.maxPayloadSize())));
        this.flushed = new Position(end);
        this.readLimit = new Position(after.readLimit());
        this.positions = new LogPositions(registry, insert, written, flushed, readLimit);
        // The replication side and the archiver are made below, from parts that take this: it reads them at each call
        // (through methods: a lambda may not read a final field before the constructor assigns it).
        this.archiveFloor = new ArchiveFloor(positions, registry, () -> replication().refusal(), this::archiver);
        SegmentLinks links = new SegmentLinks(scan.firstPrevBySegment());
        links.begins(after.scanStart(), after.scanStartPrev());
        this.preparer = new SegmentPreparer(dir, config.segmentSize(), logId, registry, config.spareSegments(),
                opened.spares(), activity::gracePeriod, e -> failFromBackground("the segment preparer failed: " + e, e), threads);
        this.dictionaries = new DictionaryTrainer(config.zstdDictionary(), config.zstdLevel(), config.segmentSize(), config.maxPayloadSize(),
                dir.toString(), () -> SegmentDictionaries.newestInLog(registry, written.get()), threads);
        // Every record's time: read by appenders inside their reservation.
        RecordClock clock = new RecordClock(threads.wallClock(config.clock()));
        this.times = new TimeIndex(registry, written::get);
        long lastTime = times.latestTime(end);
        if (lastTime != RecordCursor.NO_TIME) {
            clock.observe(lastTime); // a clock set back while the log was closed never makes times go backwards
        }
        WalStats stats = new WalStats();
        this.appender = new Appender(registry, preparer, ring, insert, published, written, notifier, links,
                scan.lastRecordLsn(), stats, dictionaries, clock);
        this.retention = new Retention(new RetainedLog(registry, positions, this::truncate), times, config.clock(),
                config.retentionTime(), config.retentionBytes(), threads);
        this.commit = new GroupCommit(appender, published, written, flushed, registry, sync, notifier,
                config.commitDelay().toNanos(), config.commitSiblings());
        this.checkpointer = new Checkpointer(controlFile, registry, flushed, links, logId, after.scanStart(), sync.durable(),
                readLimit::get);
        // Before the writer, whose periodic task samples for them; the readers and the write path they call are made below.
        this.cursors = new CursorBook(new CursorLog(this::reads, this::writes, this::replication), positions, times, config,
                config.name(), dir);
        WalReplication.Log replicated = new ReplicationLog(this::writes, positions, this::rewound);
        LogEpochs epochs = new LogEpochs(replicated, dir, adminLock, insert, opened.history(), opened.shutDownCleanly());
        ReplicaReadLimit replicaReadLimit = new ReplicaReadLimit(dir, adminLock, checkpointer, notifier, readLimit, flushed);
        LogRewind rewind = new LogRewind(replicated, dir, config.segmentSize(), commit, checkpointer, appender, preparer,
                registry, notifier, cursors.replay, insert, written, readLimit, sync);
        this.replication = new WalReplication(
                new LogRole(replicated, dir, adminLock, activity, commit, insert, epochs, replicaReadLimit, archiveFloor,
                        cursors.replay, dictionaries, rewind),
                epochs, replicaReadLimit,
                new ReceivedWrites(replicated, adminLock, activity, commit, appender, cursors.replay, written, flushed,
                        config.segmentSize(), logId),
                new ShippingReads(replicated, registry, written, flushed, readLimit, insert, config.segmentSize(), notifier),
                remote, archiveFloor);
        this.writer = new BackgroundWriter(commit, activity, config.writerDelay().toNanos(), config.offWriteDelay().toNanos(),
                config.checkpointInterval().toNanos(),
                this::periodically, threads);
        this.writes = new WritePath(config, dir, activity, appender, ring, commit, writer, remote, replication, insert, flushed);
        this.truncation = new SegmentTruncation(adminLock, writes, replication, cursors, archiveFloor, checkpointer, flushed,
                readLimit, registry, preparer, dir);
        this.reads = new ReadPath(writes, positions, registry, notifier, config);
        this.idleRing = new IdleRing(ring, insert, published, written, flushed, activity, commit, writes, budget,
                this::parkSegmentsWhileQuiescent, dir, config.idleAfter().toNanos());
        this.archiver = config.archive() == null ? null : newArchiver(config.archive()); // last: it reads the parts
        this.report = new RecoveryReport(opened.created(), opened.rebuilt(), scan.scanStart(), end, Math.max(Lsn.INVALID, scan.lastRecordLsn()),
                scan.records(), scan.segments(), scan.bytesCut(), scan.firstBadLsn(), scan.reason(), scan.truncatedCorruption(),
                System.nanoTime() - opened.startNanos(), opened.shutDownCleanly());
        this.status = new StatusSources(logId, report, dir, config.name(), positions, writes, commit, remote, replication, retention,
                archiver, preparer);
        this.metrics = new WalMetrics(stats, status);
    }

    // ------------------------------------------------------------------ what the facade is the front of

    /** The log's directory (absolute). */
    public Path directory() {
        return dir;
    }

    /** Appends, claims, flushes and durability waits. */
    public WritePath writes() {
        return writes;
    }

    /** All a reader sees of the log. */
    public ReadPath reads() {
        return reads;
    }

    /** Where the log begins and ends. */
    public LogPositions positions() {
        return positions;
    }

    /** Seek by time. */
    public TimeIndex times() {
        return times;
    }

    /** The named consumer cursors. */
    public CursorBook cursors() {
        return cursors;
    }

    /** The seam replication drives. */
    public WalReplication replication() {
        return replication;
    }

    /** What operators read about the log (its status and its meters). */
    public StatusSources status() {
        return status;
    }

    /** The log's meters and its cursors' (see WalMetrics and CursorLag). */
    public MeterBinder meterBinder() {
        return meters -> {
            metrics.bindTo(meters);
            cursors.lag.meterBinder().bindTo(meters);
        };
    }

    // ------------------------------------------------------------------ for this package's tests (PartsForTests)

    SegmentRegistry registry() {
        return registry;
    }

    SegmentPreparer preparer() {
        return preparer;
    }

    WalBuffers ring() {
        return ring;
    }

    IdleRing idleRing() {
        return idleRing;
    }

    DictionaryTrainer dictionaries() {
        return dictionaries;
    }

    /** Null when the log is not archived. */
    private Archiver archiver() {
        return archiver;
    }

    /**
     * Gives back the mappings and descriptors of every segment nobody reads, those the log writes into included: only
     * while nobody is inside the log (IdleRing, activity paused and writes locked); the next append or flush maps them
     * again (SegmentRegistry.get).
     */
    private void parkSegmentsWhileQuiescent() {
        OpenSegments.Log files = openFilesEntry;
        if (files != null) {
            openFiles.parkQuiescent(files);
        }
    }

    /** The background writer's periodic turn, after its checkpoint interval. */
    private void periodically() {
        checkpointer.checkpoint();
        cursors.tick(); // when the end passed which LSN: the cursors' lag in time
        idleRing.tick(); // an idle log gives its WAL buffers' memory back
        OpenSegments.Log files = openFilesEntry;
        if (files != null && idleRing.isIdle()) {
            openFiles.parkIdle(files); // and its sealed segments' mappings and descriptors
        }
        openFiles.tick(); // the store's open segment files back under their cap
    }

    private Archiver newArchiver(ArchiveConfig archive) {
        try {
            return new Archiver(new ArchivedWal(dir, config.segmentSize(), positions, archiveFloor, replication, writes),
                    archive, threads);
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

    /** Starts the background work, in order, once recovery is done (Wal.open). */
    public void start() {
        // A replica's log (a read limit, an epoch it did not begin) never begins an epoch on its own: its application
        // decides (it follows its primary, or promotes it by name).
        if (config.newEpochAfterCrash() && !report.shutDownCleanly() && readLimit.get() == Long.MAX_VALUE) {
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
        remote.start();
        preparer.prepareAheadOf(insert::get); // the next segment once the insert position is half way through this one
        writer.start();
        if (archiver != null) {
            archiver.start();
        }
        retention.start(); // after the archiver: it holds retention back until segments are archived
        // Last, so that a failed start leaves no entry behind. Below the flushed position nobody touches a segment
        // without entering it (see OpenSegments).
        openFilesEntry = openFiles.register(registry, flushed::get);
        idleRing.sleepAtOpen(); // in a store with a budget: its ring's bytes are taken at the first append
        // A replica's log says where its readers stop: what its primary had confirmed when it last knew.
        String limit = readLimit.get() == Long.MAX_VALUE ? ""
                : "; a replica's log: its readers stop at " + Lsn.format(readLimit.get()) + " until its primary confirms more";
        if (report.repaired()) {
            LOG.warn("Opened Walden log {}: {}{}", dir, report, limit);
        } else {
            LOG.info("Opened Walden log {}: {}{}", dir, report, limit);
        }
    }

    /** See {@link Wal#truncateBefore}. */
    public void truncateBefore(long lsn) {
        truncate(floors -> lsn);
    }

    /** Retention's removal, and {@link #truncateBefore}'s (see {@link SegmentTruncation}). */
    private void truncate(Retention.Decision decide) {
        truncation.truncate(decide);
    }

    /** See {@link Wal#close}: stops everything in the reverse order of {@link #start()}. */
    public void close() {
        if (!activity.callerInside()) {
            // First and outside the admin lock: a removal in progress takes that lock (truncateBefore), and close waits
            // for the retention thread to end.
            retention.close();
        }
        synchronized (adminLock) {
            if (writes.isClosed()) {
                return;
            }
            if (activity.callerInside()) {
                throw new IllegalStateException("close() called from inside an append, commit callback or claim of this "
                        + "log: it would wait for itself; close it from another thread");
            }
            writes.close(); // from now on every entry is refused (see WritePath.enter())
            idleRing.close();
            if (openFilesEntry != null) {
                openFiles.unregister(openFilesEntry);
            }
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
                    cursors.replay.close();
                    if (quiescent && flushed.get() >= insert.get()) {
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
                appender.close(); // no one is inside: its codec contexts can go
                ring.free(); // no one is inside: no appender can touch the ring again
                for (Segment s : registry.snapshot()) {
                    Segment gone = registry.remove(s);
                    if (gone != null) {
                        gone.markRemoved();
                    }
                }
                try {
                    controlFile.close();
                    lock.release();
                    lockChannel.close();
                } catch (IOException e) {
                    problems.add(e);
                }
            }
            if (ownsThreads) {
                threads.close(); // its clock's loop: the other jobs stopped above
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

    /** After a replica's rewind to {@code lsn}: what the archiver marked archived from there on no longer holds. */
    private void rewound(long lsn) {
        reads.rewound(lsn);
        archiveFloor.forget(lsn);
        if (archiver != null) {
            archiver.rewound(lsn);
        }
    }
}
