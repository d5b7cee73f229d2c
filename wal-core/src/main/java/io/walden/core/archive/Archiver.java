package io.walden.core.archive;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.walden.core.Lsn;
import io.walden.core.SegmentInfo;
import io.walden.core.segment.SegmentHeaderDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Archives a log's sealed segments to an {@link ArchiveTarget}, each once, verified, before the log may remove it
 * (PostgreSQL's archiver with {@code archive_status}). The guarantees, argued in docs/operations.md ("Backup and
 * restore"):
 * <ul>
 *   <li>A segment is archived only once every byte of it is flushed and a later segment has begun (it is sealed), and
 *       counted as archived only after the store verified it and the {@code .done} marker is durable
 *       ({@link ArchiveStatus}). A crash at any point uploads it again; nothing is skipped.</li>
 *   <li>{@link #retentionFloor()} holds truncation (and so recycling) back at the oldest segment not archived.</li>
 *   <li>The current segment's flushed head is uploaded as {@code <segment>.wal.partial} once it has waited
 *       {@link ArchiveConfig#timeout()}, so a quiet log still reaches the archive; the sealed upload replaces it.</li>
 *   <li>When more than {@link ArchiveConfig#maxPendingBytes()} flushed bytes are not archived, appends are refused
 *       ({@code BLOCK}) or the oldest pending segments are given up ({@code DROP_ARCHIVE}); checked every
 *       {@value #POLL_MILLIS} ms, so the cap can be passed by what is appended meanwhile.</li>
 *   <li>A replica's log is not archived (its primary archives), nor is a primary's held back by it; after a promotion
 *       the segments from the new epoch's start are archived again, replacing the old primary's objects.</li>
 * </ul>
 *
 * <p>Thread-safety: one thread ({@code walden-archiver}) does all uploading and marking; the getters and
 * {@link #retentionFloor()} may be called from any thread.
 */
public final class Archiver implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Archiver.class);
    static final long POLL_MILLIS = 100;
    private static final long HEADER = SegmentHeaderDescriptor.LENGTH;

    private final ArchivedLog log;
    private final ArchiveConfig config;
    private final ArchiveTarget target;
    private final ArchiveStatus status;
    private final Thread thread;
    private final AtomicLong archivedSegments = new AtomicLong();
    private final AtomicLong partialUploads = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private volatile boolean closed;
    private volatile long archivedLsn;
    private volatile long lagBytes;
    private volatile int pendingSegments;
    private volatile String lastError;

    // Owned by the archiver's thread.
    private boolean seenReplica;
    /** The start of the epoch the last primary turn saw; -1 before the first. */
    private long knownEpochStart = -1;
    private volatile boolean blocked; // written by the archiver, read by blocking()
    private long partialStart = -1;
    private long partialEnd;
    private long tailPendingSince;
    private long backoffNanos;
    private int failuresInARow;
    private long nextAttemptNanos;
    private long knownOldest = -1;

    /**
     * Reads the archive status of {@code log}; {@link #start()} begins archiving.
     *
     * @throws IOException when the {@code archive_status} directory cannot be read or made
     */
    public Archiver(ArchivedLog log, ArchiveConfig config) throws IOException {
        this.log = log;
        this.config = config;
        this.target = config.target();
        this.status = new ArchiveStatus(log.directory());
        this.thread = io.walden.core.thread.WaldenThreads.daemon(this::run, "walden-archiver");
        this.seenReplica = !log.acceptsAppends(); // a replica's log (its read limit is set from the control file)
        refresh(log.segments(), log.flushedLsn());
    }

    public void start() {
        thread.start();
        LOG.info("Archiving {} to {} (timeout {}, at most {} bytes pending, then {})", log.directory(), target.uri(),
                config.timeout(), config.maxPendingBytes(), config.whenFull());
    }

    // ------------------------------------------------------------------ what others read

    /** The archive, as the user named it. */
    public String target() {
        return target.uri();
    }

    /**
     * Every record below this LSN is in the archive (in a sealed segment's object or a partial one), or in a segment
     * given up under {@link ArchiveConfig.WhenFull#DROP_ARCHIVE} ({@link #droppedSegments()}).
     */
    public long archivedLsn() {
        return archivedLsn;
    }

    /** Flushed bytes not archived yet. */
    public long lagBytes() {
        return lagBytes;
    }

    /** Sealed segments waiting for their upload. */
    public int pendingSegments() {
        return pendingSegments;
    }

    /** The last failure, or null once an upload succeeded after it. */
    public String lastError() {
        return lastError;
    }

    public long archivedSegments() {
        return archivedSegments.get();
    }

    public long failures() {
        return failures.get();
    }

    /** Segments given up under {@link ArchiveConfig.WhenFull#DROP_ARCHIVE} since the log was opened. */
    public long droppedSegments() {
        return dropped.get();
    }

    /**
     * The log was rewound to {@code lsn} (a replica removing records its primary never had): the segments from
     * there on hold other bytes now, so they are archived again should this log become a primary.
     */
    public void rewound(long lsn) {
        long from = lsn / log.segmentSize() * log.segmentSize();
        try {
            status.forgetFrom(from);
        } catch (IOException e) {
            LOG.error("Could not forget the archive markers from {} after a rewind: {}", ArchiveNames.segment(from), e.toString());
        }
    }

    /** True while appends are refused because the archive is too far behind. */
    public boolean blocking() {
        return blocked;
    }

    /**
     * What truncation must keep: the start of the oldest segment neither archived nor given up;
     * {@code Long.MAX_VALUE} on a replica's log, which is not archived. Called by the log under its admin lock.
     */
    public long retentionFloor() {
        if (!log.acceptsAppends()) {
            return Long.MAX_VALUE;
        }
        for (SegmentInfo s : log.segments()) {
            if (!status.isSettled(s.startLsn())) {
                return s.startLsn();
            }
        }
        return Long.MAX_VALUE;
    }

    /** Waits until every record below {@code lsn} is archived; false on timeout. */
    public boolean awaitArchived(long lsn, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (archivedLsn < lsn) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            Thread.sleep(POLL_MILLIS / 4);
        }
        return true;
    }

    /** Registers {@code walden.archive.*} meters. */
    public void bindTo(MeterRegistry registry, Tags tags) {
        FunctionCounter.builder("walden.archive.segments", archivedSegments, AtomicLong::get)
                .description("Sealed segments uploaded to the archive and verified").tags(tags).register(registry);
        FunctionCounter.builder("walden.archive.failures", failures, AtomicLong::get)
                .description("Failed archive uploads (each retried with backoff)").tags(tags).register(registry);
        FunctionCounter.builder("walden.archive.partials", partialUploads, AtomicLong::get)
                .description("Uploads of the current segment's head after the archive timeout").tags(tags).register(registry);
        FunctionCounter.builder("walden.archive.dropped", this, Archiver::droppedSegments)
                .description("Segments given up because the archive fell too far behind (drop-archive)").tags(tags)
                .register(registry);
        Gauge.builder("walden.archive.lag.bytes", this, Archiver::lagBytes).baseUnit("bytes")
                .description("Flushed bytes not yet in the archive").tags(tags).register(registry);
        Gauge.builder("walden.archive.pending.segments", this, Archiver::pendingSegments)
                .description("Sealed segments waiting to be archived").tags(tags).register(registry);
    }

    // ------------------------------------------------------------------ the archiver's thread

    private void run() {
        while (!closed) {
            boolean more = false;
            try {
                if (System.nanoTime() - nextAttemptNanos >= 0) {
                    more = attempt();
                }
                List<SegmentInfo> segments = log.segments();
                refresh(segments, log.flushedLsn());
                admit(segments);
            } catch (IOException | RuntimeException e) {
                LOG.error("The archiver's bookkeeping failed in {}: {}", log.directory(), e.toString(), e);
            } catch (Error e) {
                lastError = "the archiver stopped: " + e; // shown in the status; truncation stays held back
                LOG.error("The archiver of {} stopped: {}", log.directory(), e.toString(), e);
                throw e;
            }
            if (!more) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(POLL_MILLIS));
            }
        }
    }

    /** One upload, if one is due; true when there may be more. A failure backs off before the next attempt. */
    private boolean attempt() {
        try {
            boolean uploaded = uploadNext();
            if (uploaded) {
                backoffNanos = 0;
                failuresInARow = 0;
                lastError = null;
            }
            return uploaded;
        } catch (IOException | RuntimeException e) {
            failures.incrementAndGet();
            failuresInARow++;
            lastError = e.getMessage() == null ? e.toString() : e.getMessage();
            backoffNanos = backoffNanos == 0 ? config.retryMin().toNanos()
                    : Math.min(config.retryMax().toNanos(), backoffNanos * 2);
            nextAttemptNanos = System.nanoTime() + backoffNanos;
            LOG.warn("Archiving to {} failed ({} in a row; retrying in {} ms): {}", target.uri(), failuresInARow,
                    TimeUnit.NANOSECONDS.toMillis(backoffNanos), lastError);
            return false;
        }
    }

    /** Uploads the oldest segment that needs it; true when it did (there may be more). */
    private boolean uploadNext() throws IOException {
        if (!log.acceptsAppends()) {
            seenReplica = true;
            return false;
        }
        long epochStart = log.epochStartLsn();
        if (epochStart != knownEpochStart) {
            // A new epoch since the last turn (a promotion, however quick), or the first turn of a log that was a
            // replica: the archive may hold another history from the epoch's start on.
            if (knownEpochStart >= 0 || seenReplica) {
                adoptArchiveAfterPromotion();
            }
            knownEpochStart = epochStart;
        }
        long flushed = log.flushedLsn();
        for (SegmentInfo s : log.segments()) {
            long start = s.startLsn();
            if (status.isSettled(start)) {
                continue;
            }
            if (flushed >= s.endLsn()) { // sealed: every byte of it is durable and nothing writes it again
                target.put(ArchiveNames.segment(start), s.path(), s.size());
                status.markDone(start);
                archivedSegments.incrementAndGet();
                LOG.debug("Archived segment {}", ArchiveNames.segment(start));
                if (partialStart == start) {
                    partialStart = -1;
                }
                deleteQuietly(ArchiveNames.partial(start));
                return true;
            }
            return uploadTail(s, flushed);
        }
        return false;
    }

    /**
     * This log was a replica and is a primary now. Below its epoch's start its segments are byte for byte the old
     * primary's, which archived them: an object of the same name and size is taken as this segment's (so a failover
     * does not re-upload, nor count as pending, everything the replica kept). From the segment holding the epoch's
     * start on, the archive may hold the old primary's bytes, which this epoch replaces: those objects are deleted
     * and the segments archived again as they seal.
     */
    private void adoptArchiveAfterPromotion() throws IOException {
        long from = log.epochStartLsn() / log.segmentSize() * log.segmentSize();
        status.forgetFrom(from);
        partialStart = -1;
        java.util.Map<String, Long> stored = new java.util.HashMap<>();
        for (ArchiveTarget.StoredObject o : target.list()) {
            long start = ArchiveNames.startOf(o.name());
            if (start >= from) {
                target.delete(o.name()); // the old primary's history past this epoch's start
            } else if (start >= 0) {
                stored.put(o.name(), o.size());
            }
        }
        int adopted = 0;
        for (SegmentInfo s : log.segments()) {
            if (s.startLsn() < from && !status.isSettled(s.startLsn())
                    && Long.valueOf(s.size()).equals(stored.get(ArchiveNames.segment(s.startLsn())))) {
                status.markDone(s.startLsn());
                adopted++;
            }
        }
        LOG.info("Promoted: {} segments below {} were archived by the old primary; segments from {} on are archived "
                + "again (the old primary's objects there were deleted)", adopted, Lsn.format(from), ArchiveNames.segment(from));
    }

    /** The current segment: its flushed head goes up once records have waited the archive timeout; true when it did. */
    private boolean uploadTail(SegmentInfo s, long flushed) throws IOException {
        long timeout = config.timeout().toNanos();
        long start = s.startLsn();
        long archivedEnd = partialStart == start ? partialEnd : start + HEADER;
        if (timeout == 0 || flushed <= archivedEnd) {
            tailPendingSince = 0;
            return false;
        }
        long now = System.nanoTime();
        if (tailPendingSince == 0) {
            tailPendingSince = now;
        }
        if (now - tailPendingSince < timeout) {
            return false;
        }
        target.put(ArchiveNames.partial(start), s.path(), flushed - start);
        partialStart = start;
        partialEnd = flushed;
        tailPendingSince = 0;
        partialUploads.incrementAndGet();
        LOG.debug("Archived the head of segment {} up to {}", ArchiveNames.segment(start), Lsn.format(flushed));
        return true;
    }

    private void deleteQuietly(String name) {
        try {
            target.delete(name);
        } catch (IOException e) {
            LOG.debug("Could not delete {} from the archive (the sealed segment replaces it anyway): {}", name, e.getMessage());
        }
    }

    /** Recomputes what the getters show. */
    private void refresh(List<SegmentInfo> segments, long flushed) throws IOException {
        if (segments.isEmpty()) {
            return;
        }
        long oldest = segments.get(0).startLsn();
        if (oldest != knownOldest) {
            status.forgetBelow(oldest); // truncated segments' markers
            knownOldest = oldest;
        }
        long archived = -1;
        int pending = 0;
        for (SegmentInfo s : segments) {
            if (status.isSettled(s.startLsn())) {
                continue;
            }
            if (archived < 0) {
                archived = Math.max(s.startLsn() + HEADER, partialStart == s.startLsn() ? partialEnd : 0);
            }
            if (flushed >= s.endLsn()) {
                pending++;
            }
        }
        archived = archived < 0 ? flushed : Math.min(archived, flushed);
        this.archivedLsn = archived;
        this.lagBytes = Math.max(0, flushed - archived);
        this.pendingSegments = pending;
    }

    /** Applies the cap on pending bytes. */
    private void admit(List<SegmentInfo> segments) throws IOException {
        long lag = lagBytes;
        long cap = config.maxPendingBytes();
        if (lag > cap && log.acceptsAppends()) {
            if (config.whenFull() == ArchiveConfig.WhenFull.BLOCK) {
                if (!blocked) {
                    blocked = true;
                    String reason = "the archive " + target.uri() + " is " + lag + " bytes behind, more than the "
                            + cap + " allowed (archive-max-pending-bytes); appends resume when it catches up"
                            + (lastError == null ? "" : "; last error: " + lastError);
                    log.blockAppends(reason);
                    LOG.error("Refusing appends to {}: {}", log.directory(), reason);
                }
                return;
            }
            long flushed = log.flushedLsn();
            for (SegmentInfo s : segments) {
                if (lagBytes <= cap || flushed < s.endLsn()) {
                    break;
                }
                if (!status.isSettled(s.startLsn())) {
                    status.markDropped(s.startLsn());
                    dropped.incrementAndGet();
                    LOG.error("Gave up archiving segment {} of {}: the archive is {} bytes behind, more than the {} "
                                    + "allowed, and the policy is drop-archive; the archive now has a gap there",
                            ArchiveNames.segment(s.startLsn()), log.directory(), lagBytes, cap);
                    refresh(segments, flushed);
                }
            }
        } else if (blocked) {
            blocked = false;
            log.blockAppends(null);
            LOG.info("Accepting appends to {} again: the archive caught up to {} ({} bytes behind)", log.directory(),
                    Lsn.format(archivedLsn), lag);
        }
    }

    /** Stops archiving (an upload in progress is given a few seconds). The target stays open: its creator closes it. */
    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(thread);
        try {
            thread.join(TimeUnit.SECONDS.toMillis(10));
            if (thread.isAlive()) {
                thread.interrupt();
                thread.join(TimeUnit.SECONDS.toMillis(5));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
