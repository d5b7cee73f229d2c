package io.walden.core.internal.archive;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.walden.core.SegmentInfo;
import io.walden.core.archive.ArchiveConfig;
import io.walden.core.archive.ArchiveNames;
import io.walden.core.archive.ArchiveTarget;
import io.walden.core.archive.ArchiverStatus;
import io.walden.core.internal.segment.SegmentFiles;
import io.walden.core.internal.thread.BackgroundThreads;
import io.walden.core.internal.thread.Loop;
import io.walden.core.internal.thread.LoopRunner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Archives a log's sealed segments to an {@link ArchiveTarget}, each once, verified, before the log may remove it
 * (PostgreSQL's archiver with {@code archive_status}); the guarantees are {@link ArchiverStatus}'s. How they are kept:
 * <ul>
 *   <li>A segment is counted as archived only after the store verified it and the {@code .done} marker is durable
 *       ({@link ArchiveStatus}).</li>
 *   <li>{@link #retentionFloor()} holds truncation (and so recycling) back at the oldest segment not archived.</li>
 *   <li>The cap on pending bytes is checked every {@value #POLL_MILLIS} ms ({@link PendingBytesCap}).</li>
 *   <li>On a replica, what its primary reported of the group's archive ({@link ArchivedLog#archivedUpstream()}) settles
 *       segments; after a promotion, objects are named by the new epoch ({@link ArchiveNames}).</li>
 * </ul>
 *
 * <p>This class is the status and the thread; each turn of that thread runs the parts, which have one job each:
 * {@link ArchiveUploader} (one upload, and the retry policy), {@link ArchiveProgress} (what the getters and meters
 * show) and {@link PendingBytesCap} (the cap on pending bytes).
 *
 * <p>Thread-safety: one loop ({@code walden-archiver}: a thread of its own, or a store's shared one) does all uploading and marking; the getters and
 * {@link #retentionFloor()} may be called from any thread.
 */
public final class Archiver implements ArchiverStatus, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Archiver.class);
    /** How often the archiver looks for work when it has none (and checks the cap on pending bytes). */
    public static final long POLL_MILLIS = 100;

    private final ArchivedLog log;
    private final ArchiveConfig config;
    private final ArchiveTarget target;
    private final ArchiveStatus status;
    /** The archiver's thread: each turn of it runs the parts below. */
    private final LoopRunner runner;
    private final ArchiveProgress progress;
    private final ArchiveUploader uploader;
    private final PendingBytesCap cap;

    /**
     * Reads the archive status of {@code log}; {@link #start()} begins archiving.
     *
     * @throws IOException when the {@code archive_status} directory cannot be read or made
     */
    public Archiver(ArchivedLog log, ArchiveConfig config) throws IOException {
        this(log, config, BackgroundThreads.own());
    }

    /**
     * As {@link #Archiver(ArchivedLog, ArchiveConfig)}, uploading on {@code threads} (the log's own, or its store's
     * shared archivers).
     */
    public Archiver(ArchivedLog log, ArchiveConfig config, BackgroundThreads threads) throws IOException {
        this.log = log;
        this.config = config;
        this.target = config.target();
        this.status = new ArchiveStatus(log.directory(), config.target().uri());
        this.runner = threads.runner(BackgroundThreads.Job.ARCHIVER, new Archiving());
        this.progress = new ArchiveProgress(status, this::settled);
        this.uploader = new ArchiveUploader(log, config, status, progress);
        this.cap = new PendingBytesCap(log, config, status, progress);
        progress.refresh(log.segments(), log.flushedLsn());
    }

    public void start() {
        runner.start();
        LOG.info("Archiving {} to {} (timeout {}, at most {} bytes pending, then {})", log.directory(), target.uri(),
                config.timeout(), config.maxPendingBytes(), config.whenFull());
    }

    // ------------------------------------------------------------------ what others read

    /** The archive, as the user named it. */
    @Override
    public String target() {
        return target.uri();
    }

    /**
     * Every record below this LSN is in the archive (in a sealed segment's object or a partial one), or in a segment
     * given up under {@link ArchiveConfig.WhenFull#DROP_ARCHIVE} ({@link #droppedSegments()}).
     */
    @Override
    public long archivedLsn() {
        return progress.archivedLsn();
    }

    /** Flushed bytes not archived yet. */
    @Override
    public long lagBytes() {
        return progress.lagBytes();
    }

    /** Sealed segments waiting for their upload. */
    @Override
    public int pendingSegments() {
        return progress.pendingSegments();
    }

    /** The last failure, or null once an upload succeeded after it. */
    @Override
    public String lastError() {
        return progress.lastError();
    }

    /**
     * The records, below the log's oldest, that the archive lacks and the log no longer holds (found when a replica
     * became primary), or null: {@link #archivedLsn()} stays below them, since a restore stops there.
     */
    @Override
    public Missing missing() {
        return progress.missing();
    }

    @Override
    public long archivedSegments() {
        return progress.archivedSegments();
    }

    @Override
    public long failures() {
        return progress.failures();
    }

    /** Segments given up under {@link ArchiveConfig.WhenFull#DROP_ARCHIVE} since the log was opened. */
    @Override
    public long droppedSegments() {
        return progress.droppedSegments();
    }

    /**
     * The log was rewound to {@code lsn} (a replica removing records its primary never had): the segments from
     * there on hold other bytes now, so they are archived again should this log become a primary.
     */
    public void rewound(long lsn) {
        long from = lsn / log.segmentSize() * log.segmentSize();
        progress.rewound(lsn);
        try {
            status.forgetFrom(from);
        } catch (IOException e) {
            LOG.error("Could not forget the archive markers from {} after a rewind: {}", SegmentFiles.name(from), e.toString());
        }
    }

    /** True while appends are refused because the archive is too far behind. */
    @Override
    public boolean blocking() {
        return cap.blocking();
    }

    /**
     * What truncation must keep: the start of the oldest segment neither archived nor given up ({@link #settled}), or
     * {@code Long.MAX_VALUE} when every segment is. Called by the log under its admin lock, and by its replication
     * senders (what the group's archive holds, told to replicas).
     */
    public long retentionFloor() {
        for (SegmentInfo s : log.segments()) {
            if (!settled(s.startLsn())) {
                return s.startLsn();
            }
        }
        return Long.MAX_VALUE;
    }

    /**
     * Whether the segment at {@code start} is in the archive, or was given up: marked so in {@code archive_status} (by
     * this log, as a primary), or, on a log that refuses appends, below what its primary reported of the group's
     * archive. A segment this log itself marked stays settled in every role: the marker is deleted when a rewind or a
     * promotion changes the segment's bytes ({@link ArchiveStatus#forgetFrom}).
     */
    private boolean settled(long start) {
        return status.isSettled(start) || !log.acceptsAppends() && start < log.archivedUpstream();
    }

    /** Waits until every record below {@code lsn} is archived; false on timeout. */
    @Override
    public boolean awaitArchived(long lsn, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (progress.archivedLsn() < lsn) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            Thread.sleep(POLL_MILLIS / 4);
        }
        return true;
    }

    /** Registers {@code walden.archive.*} meters. */
    public void bindTo(MeterRegistry registry, Tags tags) {
        progress.bindTo(registry, tags);
    }

    // ------------------------------------------------------------------ the archiver's thread

    /**
     * One turn: an upload when one is due, then the bookkeeping (progress, the pending-bytes cap). Idles a poll
     * unless an upload left more to do. An Error stops archiving, shown in the status; truncation stays held back.
     */
    private final class Archiving implements Loop {
        @Override
        public long doWork() throws IOException {
            boolean more = uploader.due(cap.blocking()) && uploader.attempt();
            List<SegmentInfo> segments = log.segments();
            progress.refresh(segments, log.flushedLsn());
            cap.admit(segments);
            return more ? 0 : TimeUnit.MILLISECONDS.toNanos(POLL_MILLIS);
        }

        @Override
        public long onError(Throwable e) {
            if (e instanceof Error error) {
                progress.stopped(error);
                LOG.error("The archiver of {} stopped: {}", log.directory(), e.toString(), e);
                return STOP;
            }
            LOG.error("The archiver's bookkeeping failed in {}: {}", log.directory(), e.toString(), e);
            return TimeUnit.MILLISECONDS.toNanos(POLL_MILLIS); // tried again at the next poll, as after any turn
        }
    }

    /** Stops archiving (an upload in progress is given a few seconds). The target stays open: its creator closes it. */
    @Override
    public void close() {
        if (!runner.stop(Duration.ofSeconds(10))) {
            runner.interrupt(); // an upload stuck in I/O: the archiver writes no log file, so an interrupt is safe
            runner.stop(Duration.ofSeconds(5));
        }
    }
}
