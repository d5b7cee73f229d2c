package io.walden.core.internal.archive;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.walden.core.SegmentInfo;
import io.walden.core.archive.ArchiverStatus;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongPredicate;

/**
 * How far the archive is behind the log, and what the archiver did: what {@link Archiver}'s getters and the
 * {@code walden.archive.*} meters show. It guarantees that {@link #archivedLsn()} never passes what the archive holds
 * (or what was given up): it is the end of the header of the oldest segment neither archived nor given up
 * ({@link ArchiveStatus}), or of that segment's head when it went up as a partial object, and never past the flushed
 * LSN.
 *
 * <p>Thread-safety: the archiver's thread records and {@link #refresh}es (and the {@link Archiver}'s constructor, before
 * that thread starts); the getters may be called from any thread (volatile fields and atomic counters). The partial
 * object's bounds and the oldest segment known are the archiver's thread's alone.
 */
public final class ArchiveProgress {
    private static final long HEADER = SegmentHeaderDescriptor.LENGTH;

    private final ArchiveStatus status;
    /** Whether a segment (by its start) is archived or given up: the archiver's rule, which a replica's role enters. */
    private final LongPredicate settled;
    private final AtomicLong archivedSegments = new AtomicLong();
    private final AtomicLong partialUploads = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private volatile long archivedLsn;
    private volatile long lagBytes;
    private volatile int pendingSegments;
    private volatile String lastError;

    /** What the archive lacks below the log's oldest segment (found at a promotion), or null. */
    private volatile ArchiverStatus.Missing missing;

    /** The lowest LSN the log was rewound to since the archiver's thread last looked; MAX_VALUE: none (any thread sets). */
    private final AtomicLong rewoundTo = new AtomicLong(Long.MAX_VALUE);

    // Owned by the archiver's thread.
    private long partialStart = -1;
    private long partialEnd;
    private long knownOldest = -1;

    public ArchiveProgress(ArchiveStatus status, LongPredicate settled) {
        this.status = status;
        this.settled = settled;
    }

    public long archivedLsn() {
        return archivedLsn;
    }

    public long lagBytes() {
        return lagBytes;
    }

    public int pendingSegments() {
        return pendingSegments;
    }

    public String lastError() {
        return lastError;
    }

    /** What the archive lacks below the log's oldest segment and the log no longer holds; null when nothing is known. */
    public ArchiverStatus.Missing missing() {
        return missing;
    }

    /**
     * The archive lacks {@code from} to {@code to}, which the log no longer holds: the archived LSN never passes it. The
     * lag ({@link #lagBytes()}, which the cap on pending bytes applies to) stays what this log has to upload: a gap that
     * no upload can fill must neither block appends nor make the cap give up segments.
     */
    public void missing(long from, long to) {
        missing = new ArchiverStatus.Missing(from, to);
        if (archivedLsn > from) {
            archivedLsn = from;
        }
    }

    /** Bytes of the log in neither the archive nor the log (0 when nothing is known to be missing). */
    public long missingBytes() {
        ArchiverStatus.Missing gap = missing;
        return gap == null ? 0 : gap.toLsn() - gap.fromLsn();
    }

    public long archivedSegments() {
        return archivedSegments.get();
    }

    public long failures() {
        return failures.get();
    }

    public long droppedSegments() {
        return dropped.get();
    }

    // ------------------------------------------------------------------ what the archiver's thread records

    /** Segment {@code start} is archived and marked done: its partial object, if any, no longer counts. */
    public void segmentArchived(long start) {
        archivedSegments.incrementAndGet();
        if (partialStart == start) {
            partialStart = -1;
        }
    }

    /** The head of segment {@code start} up to {@code end} is in the archive as its partial object. */
    public void partialArchived(long start, long end) {
        partialStart = start;
        partialEnd = end;
        partialUploads.incrementAndGet();
    }

    /** After a promotion: the partial object may hold the old primary's history, so it no longer counts. */
    public void forgetPartial() {
        partialStart = -1;
    }

    /**
     * The log was rewound to {@code lsn} (any thread): a partial object ending past it holds records the log no longer
     * has, so it stops counting at the archiver's thread's next look.
     */
    public void rewound(long lsn) {
        rewoundTo.accumulateAndGet(lsn, Math::min);
        if (archivedLsn > lsn) {
            archivedLsn = lsn; // at once, not at the next refresh: nothing past it is this log's archive any more
        }
    }

    private void applyRewind() {
        long lsn = rewoundTo.getAndSet(Long.MAX_VALUE);
        if (lsn != Long.MAX_VALUE && partialStart >= 0 && partialEnd > lsn) {
            partialStart = -1;
        }
    }

    /** Where the archived head of the current segment {@code start} ends: its partial object's end, else its header's. */
    public long headArchivedTo(long start) {
        applyRewind();
        return partialStart == start ? partialEnd : start + HEADER;
    }

    public void segmentDropped() {
        dropped.incrementAndGet();
    }

    public void uploadFailed(String error) {
        failures.incrementAndGet();
        lastError = error;
    }

    public void uploadSucceeded() {
        lastError = null;
    }

    /** The archiver's thread dies of {@code e}. */
    public void stopped(Error e) {
        lastError = "the archiver stopped: " + e;
    }

    /** Recomputes what the getters show. */
    public void refresh(List<SegmentInfo> segments, long flushed) throws IOException {
        applyRewind();
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
            if (settled.test(s.startLsn())) {
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
        this.lagBytes = Math.max(0, flushed - archived); // what is left to upload, whatever is missing below it
        ArchiverStatus.Missing gap = missing;
        if (gap != null) {
            archived = Math.min(archived, gap.fromLsn()); // a restore stops there, whatever is archived after it
        }
        this.archivedLsn = archived;
        this.pendingSegments = pending;
    }

    /**
     * Registers {@code walden.archive.*} meters. The gauges and function counters hold this object weakly: the
     * {@link Archiver} keeps it for as long as the log keeps the archiver, as it kept itself before.
     */
    public void bindTo(MeterRegistry registry, Tags tags) {
        FunctionCounter.builder("walden.archive.segments", archivedSegments, AtomicLong::get)
                .description("Sealed segments uploaded to the archive and verified").tags(tags).register(registry);
        FunctionCounter.builder("walden.archive.failures", failures, AtomicLong::get)
                .description("Failed archive uploads (each retried with backoff)").tags(tags).register(registry);
        FunctionCounter.builder("walden.archive.partials", partialUploads, AtomicLong::get)
                .description("Uploads of the current segment's head after the archive timeout").tags(tags).register(registry);
        FunctionCounter.builder("walden.archive.dropped", this, ArchiveProgress::droppedSegments)
                .description("Segments given up because the archive fell too far behind (drop-archive)").tags(tags)
                .register(registry);
        Gauge.builder("walden.archive.lag.bytes", this, ArchiveProgress::lagBytes).baseUnit("bytes")
                .description("Flushed bytes not yet in the archive").tags(tags).register(registry);
        Gauge.builder("walden.archive.missing.bytes", this, ArchiveProgress::missingBytes).baseUnit("bytes")
                .description("Bytes below the log's oldest that the archive lacks and the log no longer holds: a restore "
                        + "stops there").tags(tags).register(registry);
        Gauge.builder("walden.archive.pending.segments", this, ArchiveProgress::pendingSegments)
                .description("Sealed segments waiting to be archived").tags(tags).register(registry);
    }
}
