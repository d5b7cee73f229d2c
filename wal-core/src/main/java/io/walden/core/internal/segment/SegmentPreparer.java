package io.walden.core.internal.segment;

import io.walden.core.Lsn;
import io.walden.core.WalException;
import io.walden.core.internal.thread.Loop;
import io.walden.core.internal.thread.BackgroundThreads;
import io.walden.core.internal.thread.LoopRunner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The agent that prepares segments ahead of need and disposes of truncated ones, on its own thread
 * ({@code walden-segment-preparer}), so that neither a roll nor a truncation makes an appender wait for
 * file creation, zeroing, forcing or renaming.
 *
 * <p>Other threads talk to it only through {@link #request(long)}, {@link #dispose(Segment, Path)} and
 * {@link #await(long, long)}; every field below that is not final or volatile is owned by the preparer
 * thread. A failed preparation (a full disk) is logged, remembered for waiters, and retried with backoff:
 * nothing was reserved in the missing segment, so the log keeps serving reads and resumes appends once
 * the preparation succeeds.
 */
public final class SegmentPreparer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SegmentPreparer.class);
    private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long MAX_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final Path dir;
    private final long segmentSize;
    private final long logId;
    private final SegmentRegistry registry;
    private final int maxSpares;
    private final Deque<Path> spares = new ArrayDeque<>();
    private final ConcurrentLinkedQueue<Disposal> disposals = new ConcurrentLinkedQueue<>();
    private final Supplier<BooleanSupplier> gracePeriods;
    /** The newest segment start asked for ({@link #request}). */
    private final AtomicLong wanted = new AtomicLong(-1);
    private final AtomicLong preparedCount = new AtomicLong();
    private final AtomicLong recycledCount = new AtomicLong();
    private final Object prepared = new Object();
    /** Held while a segment is added to the registry, and by {@link #cutBack}. */
    private final Object growth = new Object();
    /** This job's thread: {@link Preparing} runs on it. */
    private final LoopRunner runner;
    /** Told when this thread hits an Error and stops: the log must fail rather than wait for segments forever. */
    private final Consumer<Throwable> onFatal;
    private volatile IOException lastFailure;
    /**
     * The log's insert position, once {@link #prepareAheadOf} gave it: the next segment is then prepared when the insert
     * position passes the middle of the newest one, not before. Null: only what {@link #request} asks for.
     */
    private volatile LongSupplier insertPosition;

    /** A truncated segment on its way out: its file already renamed, its mapping released after the grace period. */
    private static final class Disposal {
        final Segment segment;
        final Path file;
        final BooleanSupplier graceOver;
        boolean ownerReleased;

        Disposal(Segment segment, Path file, BooleanSupplier graceOver) {
            this.segment = segment;
            this.file = file;
            this.graceOver = graceOver;
        }
    }

    /**
     * @param gracePeriods starts a grace period when called; the answer turns true once every appender-side
     *                     thread that might still hold a raw address into a just-removed segment has moved on
     * @param onFatal      told of an Error that stopped this thread (the log fails)
     */
    public SegmentPreparer(Path dir, long segmentSize, long logId, SegmentRegistry registry,
                           int maxSpares, List<Path> existingSpares, Supplier<BooleanSupplier> gracePeriods,
                           Consumer<Throwable> onFatal, BackgroundThreads threads) {
        this.onFatal = onFatal;
        this.gracePeriods = gracePeriods;
        this.dir = dir;
        this.segmentSize = segmentSize;
        this.logId = logId;
        this.registry = registry;
        this.maxSpares = maxSpares;
        this.spares.addAll(existingSpares);
        this.runner = threads.runner(BackgroundThreads.Job.PREPARER, new Preparing());
    }

    public void start() {
        runner.start();
    }

    /** Asks for every segment up to and including the one starting at {@code startLsn}. */
    public void request(long startLsn) {
        if (wanted.get() < startLsn) {
            wanted.accumulateAndGet(startLsn, Math::max);
            runner.wake();
        }
    }

    /**
     * Prepares the segment after the newest once {@code insert} (the log's insert position) passes the middle of the
     * newest, looked at on every turn of this job (at most 100 ms apart): a log holds its next segment
     * only once it is on its way to needing it, so that a new or idle log holds one segment on disk, not two, and is
     * created in half the time (zeroing 64 MiB is most of a creation). Half a segment ahead leaves the preparation
     * (tens of milliseconds) far behind any append rate this disk sustains; a roll that comes first still waits for the
     * segment as it always could (Reservations), and every roll asks for the one after it at once ({@link #request}).
     */
    public void prepareAheadOf(LongSupplier insert) {
        this.insertPosition = insert;
        runner.wake();
    }

    /**
     * Hands over a truncated segment, already removed from the registry and its file already renamed to
     * {@code file}, for recycling or deletion once no thread can reach its mapping any more.
     */
    public void dispose(Segment segment, Path file) {
        disposals.add(new Disposal(segment, file, gracePeriods.get()));
        runner.wake();
    }

    /**
     * Waits until the segment starting at {@code startLsn} is live.
     *
     * @throws WalException when it could not be prepared within the timeout (the message carries the
     *                      last I/O error, e.g. a full disk)
     */
    public Segment await(long startLsn, long timeoutNanos) {
        request(startLsn);
        long deadline = System.nanoTime() + timeoutNanos;
        synchronized (prepared) {
            while (true) {
                Segment s = registry.get(startLsn);
                if (s != null) {
                    return s;
                }
                long left = deadline - System.nanoTime();
                IOException failure = lastFailure;
                boolean running = runner.isRunning();
                if (left <= 0 || !running || failure != null) {
                    // A failed preparation (a full disk) fails the waiter at once rather than stalling it;
                    // the preparer keeps retrying in the background.
                    throw new WalException("segment " + Lsn.format(startLsn) + " is not available"
                            + (failure != null ? ": preparing it failed: " + failure.getMessage()
                            : running ? " yet (timed out waiting for the preparer)" : " (the log is closing)")
                            + "; nothing was written", failure);
                }
                try {
                    prepared.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new WalException("interrupted while waiting for segment " + Lsn.format(startLsn), e);
                }
            }
        }
    }

    public IOException lastFailure() {
        return lastFailure;
    }

    public long preparedCount() {
        return preparedCount.get();
    }

    public long recycledCount() {
        return recycledCount.get();
    }

    /**
     * One turn: dispose of what is due, prepare what is wanted, then idle until asked (or, while disposals wait for
     * their grace periods, a tenth as long). A failed preparation (a full disk) is remembered for waiters, which fail
     * at once, and retried with a doubling back-off; an Error fails the log.
     */
    private final class Preparing implements Loop {
        private long backoff;

        @Override
        public long doWork() throws IOException {
            disposeDue();
            askForTheNextPastHalfway();
            prepareWanted();
            backoff = 0;
            return disposals.isEmpty() ? IDLE_PARK_NANOS : IDLE_PARK_NANOS / 10;
        }

        @Override
        public long onError(Throwable e) {
            if (e instanceof IOException io) {
                lastFailure = io;
                backoff = Math.min(MAX_BACKOFF_NANOS, Math.max(TimeUnit.MILLISECONDS.toNanos(50), backoff * 2));
                LOG.error("Preparing the next segment in {} failed; appends that need it will fail until it "
                        + "succeeds (retrying in {} ms): {}", dir, TimeUnit.NANOSECONDS.toMillis(backoff), e.toString());
                synchronized (prepared) {
                    prepared.notifyAll();
                }
                return backoff;
            }
            if (e instanceof Error) {
                // Appends need the next segment: without this thread they would each wait out the roll timeout. Fail
                // the log loudly instead, and let waiters fail at once.
                lastFailure = new IOException("the segment preparer failed: " + e, e);
                synchronized (prepared) {
                    prepared.notifyAll();
                }
                onFatal.accept(e);
                return STOP;
            }
            LOG.error("Segment preparer hit an unexpected error; retrying", e);
            return MAX_BACKOFF_NANOS;
        }
    }

    /**
     * A replica's rewind: removes every segment after the one starting at {@code keep} (their files renamed out of
     * the log at once, durably, then disposed of once no reader can reach them) and forgets that they were asked for.
     * Under the lock the preparer holds while it adds a segment, so none it is preparing appears after them.
     */
    public void cutBack(long keep) throws IOException {
        synchronized (growth) {
            for (Segment s : registry.snapshot()) {
                if (s.startLsn() <= keep) {
                    continue;
                }
                Path removedFile = dir.resolve(s.path().getFileName() + SegmentFiles.REMOVED_SUFFIX);
                // s, or its mapping again when a reader entered it after it was parked
                Segment gone = registry.renameAndRemove(s, dir, removedFile);
                dispose(gone != null ? gone : s, removedFile);
            }
            wanted.set(keep);
        }
    }

    /** {@link #prepareAheadOf}: asks for the segment after the newest once the insert position is past its middle. */
    private void askForTheNextPastHalfway() {
        LongSupplier insert = insertPosition;
        Segment newest = insert == null ? null : registry.newest();
        if (newest != null && insert.getAsLong() >= newest.startLsn() + segmentSize / 2) {
            request(newest.endLsn());
        }
    }

    private void prepareWanted() throws IOException {
        synchronized (growth) {
            prepareWantedLocked();
        }
    }

    private void prepareWantedLocked() throws IOException {
        Segment newest = registry.newest();
        long next = newest == null ? -1 : newest.endLsn();
        while (runner.isRunning() && next >= 0 && next <= wanted.get()) {
            Path reuse = spares.pollFirst();
            Path file = SegmentFiles.prepare(dir, segmentSize, next, logId, reuse);
            Segment segment = Segment.map(file, next, segmentSize);
            registry.add(segment);
            lastFailure = null;
            preparedCount.incrementAndGet();
            if (reuse != null) {
                recycledCount.incrementAndGet();
            }
            LOG.debug("Prepared segment {}{}", file.getFileName(), reuse != null ? " (recycled)" : "");
            synchronized (prepared) {
                prepared.notifyAll();
            }
            next += segmentSize;
        }
    }

    private synchronized void disposeDue() {
        for (Iterator<Disposal> it = disposals.iterator(); it.hasNext(); ) {
            Disposal r = it.next();
            if (!r.ownerReleased) {
                if (!r.graceOver.getAsBoolean()) {
                    continue; // an appender or the flush leader may still hold its address
                }
                r.segment.markRemoved();
                r.ownerReleased = true;
            }
            if (!r.segment.isReleased()) {
                continue; // a reader is still inside; try again later
            }
            it.remove();
            try {
                if (spares.size() < maxSpares) {
                    Path spare = dir.resolve(r.segment.path().getFileName().toString()
                            .replace(SegmentFiles.SUFFIX, SegmentFiles.SPARE_SUFFIX));
                    SegmentFiles.rename(dir, r.file, spare);
                    spares.addLast(spare);
                } else {
                    SegmentFiles.delete(dir, r.file);
                }
            } catch (IOException e) {
                LOG.warn("Could not dispose of truncated segment {}: {}", r.file, e.toString());
            }
        }
    }

    /** Stops the thread; segments it prepared stay in the registry for the owner to release. */
    @Override
    public void close() {
        runner.stop(Duration.ofSeconds(30));
        disposeDue();
        synchronized (prepared) {
            prepared.notifyAll();
        }
    }
}
