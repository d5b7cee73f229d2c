package io.walden.core.internal.thread;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Where a log's background jobs run. A log opened on its own runs each job on a thread of its own, as a log always did
 * ({@link #own()}); the logs of a store share a few groups of threads, one group per kind of job, so that a slow
 * upload never holds up a flush and a thousand idle logs cost a fixed handful of threads ({@link #shared}).
 *
 * <p>Thread-safety: every method from any thread. {@link #close()} comes after every log using it has closed.
 */
public final class BackgroundThreads implements AutoCloseable {
    /** The kinds of background job, with the name each one's thread has (or each thread of its group has, numbered). */
    public enum Job {
        /** Writes and forces what was appended (BackgroundWriter): a store's flushes of different logs run in parallel. */
        WRITER("walden-writer"),
        /** Prepares segment files ahead of need (SegmentPreparer): blocks on writing zeros and forcing them. */
        PREPARER("walden-segment-preparer"),
        /** Uploads sealed segments (Archiver): blocks on the object store. */
        ARCHIVER("walden-archiver"),
        /** Retention's looks and removals (a removal forces a checkpoint and directories). */
        UPKEEP("walden-upkeep"),
        /** The store journal's checkpoint: forces the logs' files, never behind retention's removals. */
        CHECKPOINT("walden-journal-checkpoint"),
        /**
         * The store journal's force for callers with no event loop to run it on (a replica's receivers): never behind
         * a writer that waits for a log's flush, which may be waiting for this very force.
         */
        JOURNAL_FORCE("walden-journal-force"),
        /** The remote waits' timers: short turns, never behind a removal's forces. */
        TIMERS("walden-remote-timeouts"),
        /** Trains zstd dictionaries and looks for one in the log: seconds of CPU, rarely. */
        TRAINER("walden-dictionary-trainer"),
        /** Ticks the cached wall clock that record times come from. */
        CLOCK("walden-clock");

        public final String threadName;

        Job(String threadName) {
            this.threadName = threadName;
        }
    }

    private static final Logger LOG = LoggerFactory.getLogger(BackgroundThreads.class);
    /** The shared groups by kind of job; empty for a log's own threads. */
    private final Map<Job, LoopGroup> groups;
    /** The cached clocks by the clock they cache: one per clock in a store; one per log on its own. */
    private final Map<Clock, CachedWallClock> clocks = new ConcurrentHashMap<>();
    private final List<LoopRunner> clockRunners = new ArrayList<>();

    private BackgroundThreads(Map<Job, LoopGroup> groups) {
        this.groups = groups;
    }

    /** A thread of its own for each job of one log (what a log opened with {@code Wal.open} has). */
    public static BackgroundThreads own() {
        return new BackgroundThreads(Map.of());
    }

    /**
     * Groups shared by many logs: {@code writers} threads for flushes (the cores, so that as many logs force at once),
     * two for segment preparation and two for uploads, one each for upkeep, the journal's checkpoint and its forces
     * for callers with no loop, the timers, training and the clock.
     */
    public static BackgroundThreads shared(int writers) {
        Map<Job, LoopGroup> groups = new EnumMap<>(Job.class);
        for (Job job : Job.values()) {
            int size = switch (job) {
                case WRITER -> Math.max(1, writers);
                case PREPARER, ARCHIVER -> 2;
                case UPKEEP, CHECKPOINT, JOURNAL_FORCE, TIMERS, TRAINER, CLOCK -> 1;
            };
            groups.put(job, new LoopGroup(job.threadName + (size == 1 ? "" : "s"), size));
        }
        return new BackgroundThreads(groups);
    }

    /** Whether the jobs of many logs share these threads. */
    public boolean isShared() {
        return !groups.isEmpty();
    }

    /** The threads these groups hold (0 for a log's own threads: each runner makes one). */
    public int threadCount() {
        int n = 0;
        for (LoopGroup g : groups.values()) {
            n += g.size();
        }
        return n;
    }

    /** A runner for {@code loop}, a job of kind {@code job}; not started. */
    public LoopRunner runner(Job job, Loop loop) {
        LoopGroup g = groups.get(job);
        return g == null ? new LoopRunner(job.threadName, loop) : g.runner(job.threadName, loop);
    }

    /** Runs {@code task} once, in the background, as a job of kind {@code job}; a failure is logged, never retried. */
    public void runOnce(Job job, Runnable task) {
        runner(job, new Loop() {
            @Override
            public long doWork() {
                task.run();
                return STOP;
            }

            @Override
            public long onError(Throwable failure) {
                LOG.error("The background task ({}) failed: {}", job.threadName, failure.toString(), failure);
                return STOP;
            }
        }).start();
    }

    /**
     * The cached wall clock of {@code clock}: shared by every log of a store that uses the same clock. Its loop starts
     * ticking at the first read (a log that fails to open, or never appends, starts no thread for it).
     */
    public CachedWallClock wallClock(Clock clock) {
        return clocks.computeIfAbsent(clock, c -> {
            CachedWallClock cached = new CachedWallClock(c);
            LoopRunner r = runner(Job.CLOCK, cached.ticking());
            synchronized (clockRunners) {
                clockRunners.add(r);
            }
            cached.ticksOn(r);
            return cached;
        });
    }

    /** Stops the clocks' loops and ends the shared groups' threads (a log's own threads end with their jobs). */
    @Override
    public void close() {
        synchronized (clockRunners) {
            for (LoopRunner r : clockRunners) {
                r.stop(Duration.ofSeconds(5));
            }
            clockRunners.clear();
        }
        clocks.clear();
        for (LoopGroup g : groups.values()) {
            g.close(30, TimeUnit.SECONDS);
        }
    }
}
