package io.walden.core.internal;

import io.walden.core.internal.commit.Activity;
import io.walden.core.internal.commit.GroupCommit;
import io.walden.core.internal.commit.Position;
import io.walden.core.internal.commit.WalBuffers;
import io.walden.core.internal.record.RecordDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Gives an idle log's WAL buffers back to the operating system, so that a store of a thousand logs holds memory for
 * the logs that append, not for every log it ever opened (issue #36: "a log takes what its appends need and gives it
 * back"). The ring stays allocated; its pages are returned ({@link WalBuffers#releasePages}) and come back, zeroed, at
 * the next touch: an idle log costs nothing but its address range.
 *
 * <p>Why it is safe: once everything appended is written into the files ({@code insert == published == written}),
 * every byte of the ring is zero but the next record's header words written ahead at the end (the {@link WalBuffers}
 * invariant), which are checked, kept and put back. While it works nobody touches the ring: it
 * {@link Activity#pause pauses} the log's activity, so that every thread entering the log (appends, claims, control
 * records, flushes, a replica's applier, a rewind) waits outside; waits for everyone inside to leave (a grace period,
 * as truncation's; it gives up after {@link #GRACE_NANOS} and tries at a later tick); enters itself, so that
 * {@code close()} waits for it before it frees the ring, and sees the log still open; and holds the WAL write lock. An
 * idle log's appender waits a few milliseconds, once.
 *
 * <p>Thread-safety: {@link #tick} from the background writer's checkpoint, outside the log's activity; {@link #trim}
 * from there or a test, one at a time.
 */
public final class IdleRing {
    private static final Logger LOG = LoggerFactory.getLogger(IdleRing.class);
    /** How long a log's end must stay where it is before its WAL buffers go back. */
    static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** Longest the trim waits for those inside the log to leave before it gives up (and tries again later). */
    private static final long GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** The words at the end that may be written ahead (the next record's header): kept and put back. */
    private static final int AHEAD = RecordDescriptor.TIMED_HEADER_LENGTH;
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(64 << 10).asReadOnlyBuffer();

    private final WalBuffers ring;
    private final Position insert;
    private final Position published;
    private final Position written;
    private final Activity activity;
    private final GroupCommit commit;
    /** Whether the log is closed: close() frees the ring, so a closed log's is never touched here. */
    private final WritePath writes;
    /** Parks the segments the log writes into, while nobody is inside (WalParts#parkSegmentsWhileQuiescent). */
    private final Runnable parkSegments;
    /** The log's directory, for the message. */
    private final Path dir;
    /** The end seen at the last tick, and since when (background writer only). */
    private long lastEnd = -1;
    private long sameSince;
    /** The end at which the ring was last returned: not again until the log moved. */
    private long trimmedAt = -1;
    private volatile long trims;

    IdleRing(WalBuffers ring, Position insert, Position published, Position written, Activity activity, GroupCommit commit,
             WritePath writes, Runnable parkSegments, Path dir) {
        this.ring = ring;
        this.insert = insert;
        this.published = published;
        this.written = written;
        this.activity = activity;
        this.commit = commit;
        this.writes = writes;
        this.parkSegments = parkSegments;
        this.dir = dir;
    }

    /** Whether the log's end stayed where it is for {@link #IDLE_NANOS} at the last {@link #tick} (background writer). */
    boolean isIdle() {
        return lastEnd >= 0 && System.nanoTime() - sameSince >= IDLE_NANOS;
    }

    /** How many times the ring's pages went back. */
    public long trims() {
        return trims;
    }

    /** The background writer's periodic turn: returns the ring once the log's end stayed put for {@link #IDLE_NANOS}. */
    void tick() {
        long end = insert.get();
        long now = System.nanoTime();
        if (end != lastEnd) {
            lastEnd = end;
            sameSince = now;
            return;
        }
        if (end != trimmedAt && now - sameSince >= IDLE_NANOS && trim()) {
            trimmedAt = end;
        }
    }

    /**
     * Returns the ring's pages if everything appended is in the files and nobody is inside the log within a grace
     * period; false when it did not (someone appended, or stayed inside, or the ring was not as the invariant says).
     */
    public synchronized boolean trim() {
        long end = insert.get();
        if (writes.isClosed() || published.get() != end || written.get() != end) {
            return false;
        }
        activity.pause();
        try {
            Activity.Snapshot inside = activity.snapshot();
            long deadline = System.nanoTime() + GRACE_NANOS;
            while (!activity.passed(inside)) {
                if (System.nanoTime() - deadline > 0) {
                    return false;
                }
                LockSupport.parkNanos(this, 50_000);
            }
            Activity.Cell self = activity.cell();
            Activity.enterWhilePaused(self);
            try {
                if (writes.isClosed()) {
                    return false; // close() came first: it frees the ring once nobody is inside
                }
                commit.lockWrites();
                try {
                    if (insert.get() == end && published.get() == end && written.get() == end && release(end)) {
                        parkSegments.run(); // and the segments it writes into: nobody is inside
                        return true;
                    }
                    return false;
                } finally {
                    commit.unlockWrites();
                }
            } finally {
                Activity.exit(self);
            }
        } finally {
            activity.resume();
        }
    }

    /** Keeps the words written ahead at the end, returns the pages, puts the words back. */
    private boolean release(long end) {
        long at = ring.offset(end);
        int ahead = (int) Math.min(AHEAD, ring.size() - at);
        if (!zeroBut(at, ahead)) {
            LOG.warn("Not returning the WAL buffers of the log in {}: they hold bytes past its end {} (a bug: please "
                    + "report it)", dir, end);
            return false;
        }
        long[] words = new long[ahead / Long.BYTES];
        for (int i = 0; i < words.length; i++) {
            words[i] = ring.readLong(at + (long) i * Long.BYTES);
        }
        boolean released = ring.releasePages();
        for (int i = 0; i < words.length; i++) {
            ring.writeLong(at + (long) i * Long.BYTES, words[i]);
        }
        if (released) {
            trims++;
        }
        return released;
    }

    /** Whether every byte of the ring is zero outside {@code [at, at + ahead)}. */
    private boolean zeroBut(long at, int ahead) {
        ByteBuffer view = ring.newView();
        return isZero(view, 0, (int) at) && isZero(view, (int) (at + ahead), (int) ring.size());
    }

    private static boolean isZero(ByteBuffer view, int from, int to) {
        for (int p = from; p < to; ) {
            int n = Math.min(ZEROS.capacity(), to - p);
            if (view.slice(p, n).mismatch(ZEROS.slice(0, n)) >= 0) {
                return false;
            }
            p += n;
        }
        return true;
    }
}
