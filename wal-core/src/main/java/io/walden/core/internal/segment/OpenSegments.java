package io.walden.core.internal.segment;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * The open segment files of a store (or of a log opened on its own), held under a cap: {@code maxOpenFiles}. Each open
 * segment file costs a mapping and two descriptors (the log's channel and Chronicle's); a store of a thousand logs, or
 * a log of a thousand segments, that kept all of them open would meet the process's descriptor limit and the kernel's
 * {@code vm.max_map_count} (Redpanda's #2320 and #4022, Kafka's #1353). Above the cap, a sweep parks segments (see
 * {@link Segment}): their mappings and descriptors go, and the next reader maps them again.
 *
 * <p>What may be parked: a segment wholly below its log's flushed position, which no thread touches without entering
 * it (the appenders, the writer and the flush leader work above that position). The segments a log writes into, and the
 * one prepared next, stay open: the cap is exceeded by those of logs that append, never by sealed ones once a sweep
 * ran. Which are parked: a clock algorithm (second chance) over the entries readers make, so that segments read since
 * the last sweep stay open while unread ones go first.
 *
 * <p>An idle log parks its sealed segments whatever the cap ({@link #parkIdle}), and, once its WAL buffers went back
 * (nobody inside it), the segment it ends in and the one prepared after it ({@link #parkQuiescent}): a store's idle
 * logs hold no mapping and no segment descriptor.
 *
 * <p>Thread-safety: every method from any thread; sweeps are serialised on this object. A sweep runs from the logs'
 * periodic turns (the background writers'), at most every {@link #SWEEP_INTERVAL_NANOS} for the whole store.
 */
public final class OpenSegments {
    /** The default cap: 512 segment files open (about 1,024 descriptors). */
    public static final int DEFAULT_MAX_OPEN_FILES = 512;
    private static final long SWEEP_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    /** One log's segments, and the position below which they may be parked (its flushed position). */
    public record Log(SegmentRegistry registry, LongSupplier parkableBelow) {
    }

    private final int maxOpenFiles;
    private final List<Log> logs = new CopyOnWriteArrayList<>();
    private final AtomicLong nextSweep = new AtomicLong(System.nanoTime());
    private final AtomicLong parked = new AtomicLong();
    /** The registered logs' segments that hold a mapping now (each Segment counts itself in and out). */
    private final AtomicInteger mapped = new AtomicInteger();

    public OpenSegments(int maxOpenFiles) {
        if (maxOpenFiles < 1) {
            throw new IllegalArgumentException("maxOpenFiles must be at least 1, got " + maxOpenFiles);
        }
        this.maxOpenFiles = maxOpenFiles;
    }

    /** Counts a log's segments in: its sealed segments may be parked from now on. */
    public Log register(SegmentRegistry registry, LongSupplier parkableBelow) {
        Log log = new Log(registry, parkableBelow);
        registry.countIn(mapped);
        logs.add(log);
        return log;
    }

    /** The log closed: its segments no longer count. */
    public void unregister(Log log) {
        logs.remove(log);
    }

    /** How many segments were parked so far, by sweeps and idle logs. */
    public long parked() {
        return parked.get();
    }

    /**
     * A log's periodic turn: sweeps when one is due for the store and its logs hold more than the cap open. Cheap when
     * under the cap (one load of the count of mappings).
     */
    public void tick() {
        long now = System.nanoTime();
        long due = nextSweep.get();
        if (now - due < 0 || mapped.get() <= maxOpenFiles
                || !nextSweep.compareAndSet(due, now + SWEEP_INTERVAL_NANOS)) {
            return;
        }
        sweep();
    }

    /**
     * Parks open segments beyond the cap: first those not entered since the last sweep (and clears the mark of the
     * others), then, if still over, any that may be parked.
     *
     * @return how many were parked
     */
    public synchronized int sweep() {
        List<Segment> candidates = new ArrayList<>();
        List<Log> owners = new ArrayList<>();
        int open = 0;
        for (Log log : logs) {
            long below = log.parkableBelow.getAsLong();
            for (Segment s : log.registry.snapshot()) {
                if (!s.isOpen()) {
                    continue;
                }
                open++;
                if (s.endLsn() <= below) {
                    candidates.add(s);
                    owners.add(log);
                }
            }
        }
        int over = open - maxOpenFiles;
        int done = 0;
        for (int pass = 0; pass < 2 && done < over; pass++) {
            for (int i = 0; i < candidates.size() && done < over; i++) {
                Segment s = candidates.get(i);
                if (pass == 0 && s.referenced) {
                    s.referenced = false; // entered since the last sweep: a second chance
                    continue;
                }
                Log owner = owners.get(i);
                if (owner.registry.park(s, owner.parkableBelow)) {
                    done++;
                }
            }
        }
        parked.addAndGet(done);
        return done;
    }

    /**
     * Parks every segment of a log that nobody is inside, the ones it writes into and the one prepared next included:
     * only while nobody is inside the log ({@code IdleRing}: activity paused, writes locked), since the append path,
     * the writer and the flush leader touch those without entering them. They map them again through
     * {@link SegmentRegistry#get} at the next append or flush.
     *
     * @return how many were parked
     */
    public int parkQuiescent(Log log) {
        int done = 0;
        for (Segment s : log.registry.snapshot()) {
            if (s.isOpen() && log.registry.parkQuiescent(s)) {
                done++;
            }
        }
        parked.addAndGet(done);
        return done;
    }

    /**
     * Parks the sealed segments of an idle log ({@code IdleRing}: its end did not move for a while) that were not
     * entered since the last look; a segment being read is kept, and looked at again next time.
     *
     * @return how many were parked
     */
    public int parkIdle(Log log) {
        int done = 0;
        long below = log.parkableBelow.getAsLong();
        for (Segment s : log.registry.snapshot()) {
            if (!s.isOpen() || s.endLsn() > below) {
                continue;
            }
            if (s.referenced) {
                s.referenced = false;
            } else if (log.registry.park(s, log.parkableBelow)) {
                done++;
            }
        }
        parked.addAndGet(done);
        return done;
    }
}
