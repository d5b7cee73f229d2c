package io.walden.core.internal.retention;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.walden.core.Lsn;
import io.walden.core.RecordTime;
import io.walden.core.internal.TimeIndex;
import io.walden.core.internal.record.RecordCursor;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;
import io.walden.core.internal.segment.SegmentRegistry;
import io.walden.core.internal.thread.BackgroundThreads;
import io.walden.core.internal.thread.LoopRunner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Retention by time and by size (Kafka's {@code retention.ms} and {@code retention.bytes}; docs/operations.md,
 * "Retention"): every {@link #PERIOD}, on the log's upkeep loop (a thread of its own, or its store's), it works out how far the oldest sealed segments may go,
 * and removes them through the log's truncation (Wal.truncateBefore), which removes whole segments oldest first,
 * each renamed out of the log before the next (a crash mid-way leaves a log that opens with nothing missing in the
 * middle), and never below what a holder still needs. What each holder keeps that retention would remove is reported
 * ({@link #holds()}, the {@code walden.retention.held.bytes} gauge).
 *
 * <ul>
 *   <li><b>Time</b>: a sealed segment goes once all its records are older than the limit: once the next segment's
 *       first record is (times never decrease in LSN order). A segment whose successor has no time (written before
 *       format 2) is judged by its file's modification time, an upper bound of its records' times.</li>
 *   <li><b>Size</b>: while the segments from the oldest to the one being written hold more than the limit, the oldest
 *       sealed one goes. The segment being written is never removed, so the log may hold up to one segment more; the
 *       directory also holds the next segment, prepared ahead, and up to spare-segments recycled ones.</li>
 * </ul>
 *
 * <p>Thread-safety: {@link #enforce} runs on the upkeep loop (or a test's thread); the rest may be called from any.
 */
public final class Retention implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Retention.class);
    /**
     * How often retention looks when the log has not moved into a new segment (time passing is what may let a segment
     * go then); it also looks within {@link #POLL} of every move into a new segment (growth is what may exceed the size
     * limit), so a disk stays within a segment or so of the limit.
     */
    public static final Duration PERIOD = Duration.ofSeconds(5);
    /** How often the retention thread checks whether the log moved into a new segment or the clock moved on: a volatile read. */
    static final Duration POLL = Duration.ofMillis(100);

    /** What can hold the log back from retention (the tag {@code holder} of {@code walden.retention.held.bytes}). */
    public enum Holder {
        REPLICATION_SLOT("replication_slot"), CURSOR("cursor"), ARCHIVE("archive");

        public final String tag;

        Holder(String tag) {
            this.tag = tag;
        }
    }

    /** A holder keeping {@code bytes} that retention would remove, since {@code since}. */
    public record Hold(Holder holder, long bytes, long floorLsn, Instant since) {
    }

    /**
     * The LSN each holder needs kept (Long.MAX_VALUE: nothing), read once for one truncation: what a look reports as
     * held and what its removal keeps are the same floors, even while a holder moves.
     */
    public record Floors(long replicationSlot, long cursor, long archive) {
        public long of(Holder holder) {
            return switch (holder) {
                case REPLICATION_SLOT -> replicationSlot;
                case CURSOR -> cursor;
                case ARCHIVE -> archive;
            };
        }

        /** What truncation must keep for them all. */
        public long min() {
            return Math.min(replicationSlot, Math.min(cursor, archive));
        }
    }

    /** Where to truncate, given the holders' floors: an LSN whose segment's predecessors may go, or {@link #NOTHING}. */
    @FunctionalInterface
    public interface Decision {
        long truncateBefore(Floors floors);
    }

    /** A {@link Decision} to remove nothing: no truncation at all (nor the checkpoint it would write). */
    public static final long NOTHING = Long.MIN_VALUE;

    /** What the log offers retention: its segments, positions, holders and truncation. */
    public interface Log {
        SegmentRegistry registry();

        long insertLsn();

        long writtenLsn();

        /**
         * Under the log's admin lock: reads the holders' floors once, asks {@code decide} where to truncate, and removes
         * whole segments below that LSN's segment as far as those same floors allow (Wal.truncateBefore).
         */
        void truncate(Decision decide);
    }

    private final Log log;
    private final TimeIndex times;
    private final Clock clock;
    private final Duration maxAge;
    private final long maxBytes;
    private final AtomicLong removed = new AtomicLong();
    private final Map<Holder, Hold> holds = Collections.synchronizedMap(new EnumMap<>(Holder.class));
    private final BackgroundThreads threads;
    private LoopRunner runner;
    /** Retention thread only: the insert's segment and the clock at the last look. */
    private long lookedAtSegment = -1;
    private Instant lookedAt = Instant.MIN;

    /**
     * @param maxAge   null: no time limit
     * @param maxBytes 0: no size limit
     */
    public Retention(Log log, TimeIndex times, Clock clock, Duration maxAge, long maxBytes, BackgroundThreads threads) {
        this.log = log;
        this.threads = threads;
        this.times = times;
        this.clock = clock;
        this.maxAge = maxAge;
        this.maxBytes = maxBytes;
    }

    public boolean enabled() {
        return maxAge != null || maxBytes > 0;
    }

    public Duration maxAge() {
        return maxAge;
    }

    public long maxBytes() {
        return maxBytes;
    }

    /** Segments removed by retention since the log opened. */
    public long removedSegments() {
        return removed.get();
    }

    /** The holders keeping back what retention would remove, at its last look. */
    public List<Hold> holds() {
        synchronized (holds) {
            return List.copyOf(holds.values());
        }
    }

    public void start() {
        if (!enabled()) {
            return;
        }
        runner = threads.runner(BackgroundThreads.Job.UPKEEP, () -> {
            lookIfDue();
            return POLL.toNanos();
        });
        runner.start();
    }

    private void lookIfDue() {
        long segment = log.registry().segmentStart(log.insertLsn());
        Instant now = clock.instant();
        if (segment == lookedAtSegment && now.isBefore(lookedAt.plus(PERIOD)) && !now.isBefore(lookedAt)) {
            return;
        }
        lookedAtSegment = segment;
        lookedAt = now;
        try {
            enforce();
        } catch (RuntimeException e) {
            // A failed removal (a disk error) or a closed log: the next look tries again; nothing is lost by waiting.
            LOG.warn("Retention could not remove old segments: {}", e.toString());
        }
    }

    /** One look: removes what the limits allow and the holders do not keep. Returns the segments removed. */
    public int enforce() {
        long wanted = wantedOldest();
        SegmentRegistry registry = log.registry();
        long[] before = {NOTHING};
        log.truncate(floors -> {
            recordHolds(wanted, floors);
            Segment oldest = registry.oldest();
            if (oldest == null || Math.min(wanted, registry.segmentStart(floors.min())) <= oldest.startLsn()) {
                return NOTHING; // nothing to remove, or held: no truncation (and no checkpoint it would force) at all
            }
            before[0] = oldest.startLsn();
            return wanted;
        });
        if (before[0] == NOTHING) {
            return 0;
        }
        Segment now = registry.oldest();
        int gone = now == null ? 0 : (int) ((now.startLsn() - before[0]) / registry.segmentSize());
        if (gone > 0) {
            removed.addAndGet(gone);
            LOG.info("Retention removed {} segment(s): the log now begins at {}", gone,
                    Lsn.format(registry.oldest() == null ? wanted : registry.oldest().startLsn()));
        }
        return gone;
    }

    /** The start of the oldest segment the limits keep (the oldest segment's start when they keep everything). */
    long wantedOldest() {
        List<Segment> segments = new ArrayList<>();
        long current = log.registry().segmentStart(log.insertLsn());
        for (Segment s : log.registry().snapshot()) {
            if (s.startLsn() <= current) {
                segments.add(s);
            }
        }
        if (segments.isEmpty()) {
            return 0;
        }
        long segmentSize = log.registry().segmentSize();
        int keepFrom = 0;
        if (maxBytes > 0) {
            while (keepFrom < segments.size() - 1 && (long) (segments.size() - keepFrom) * segmentSize > maxBytes) {
                keepFrom++;
            }
        }
        if (maxAge != null) {
            long cutoff = RecordTime.toMicros(clock.instant().minus(maxAge));
            long written = log.writtenLsn();
            while (keepFrom < segments.size() - 1 && newestTimeBound(segments, keepFrom, written) < cutoff) {
                keepFrom++;
            }
        }
        return segments.get(keepFrom).startLsn();
    }

    /** An upper bound of the times of segment i's records (i sealed): the next one's first time, or its file's time. */
    private long newestTimeBound(List<Segment> segments, int i, long written) {
        Segment next = segments.get(i + 1);
        long t = times.timeAt(next.startLsn() + SegmentHeaderDescriptor.LENGTH, written);
        if (t != RecordCursor.NO_TIME) {
            return t;
        }
        try {
            return RecordTime.toMicros(Files.getLastModifiedTime(segments.get(i).path()).toInstant());
        } catch (IOException e) {
            return Long.MAX_VALUE; // cannot tell: keep it
        }
    }

    private void recordHolds(long wanted, Floors floors) {
        SegmentRegistry registry = log.registry();
        Segment oldest = registry.oldest();
        long start = oldest == null ? wanted : oldest.startLsn();
        synchronized (holds) {
            for (Holder h : Holder.values()) {
                long floor = floors.of(h);
                long keptFrom = Math.max(start, registry.segmentStart(floor));
                if (floor == Long.MAX_VALUE || keptFrom >= wanted) {
                    holds.remove(h);
                    continue;
                }
                Hold before = holds.get(h);
                holds.put(h, new Hold(h, wanted - keptFrom, floor, before == null ? clock.instant() : before.since()));
            }
        }
    }

    /** {@code walden.retention.removed.segments} and {@code walden.retention.held.bytes{holder}}. */
    public void bindTo(MeterRegistry registry, Tags tags) {
        FunctionCounter.builder("walden.retention.removed.segments", removed, AtomicLong::get)
                .description("Segments removed by retention (retention-time, retention-bytes)").tags(tags)
                .register(registry);
        for (Holder h : Holder.values()) {
            Gauge.builder("walden.retention.held.bytes", holds, m -> {
                Hold hold = m.get(h);
                return hold == null ? 0 : hold.bytes();
            }).description("Bytes retention would remove that a holder still needs").baseUnit("bytes")
                    .tags(tags).tag("holder", h.tag).register(registry);
        }
    }

    @Override
    public void close() {
        if (runner != null) {
            runner.stop(Duration.ofSeconds(10));
        }
    }
}
