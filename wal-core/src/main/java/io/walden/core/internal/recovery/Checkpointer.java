package io.walden.core.internal.recovery;

import io.walden.core.internal.commit.Position;
import io.walden.core.internal.segment.SegmentLinks;
import io.walden.core.internal.segment.SegmentRegistry;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.LongSupplier;

/**
 * Writes checkpoints to the control file: the segment holding the flushed position (where the next
 * recovery starts scanning), the prev link of that segment's first record, and the flushed position
 * itself (below which any damage is corruption, not a torn tail).
 *
 * <p>Called by the background writer every {@code checkpointInterval}, by truncation and by close.
 * Thread-safety: synchronized; the scan start it reports only moves forward.
 */
public final class Checkpointer {
    private final ControlFile controlFile;
    private final SegmentRegistry registry;
    private final Position flushed;
    private final SegmentLinks links;
    private final long logId;
    private final boolean durable;
    private long lastFlushed = -1;
    private long lastReadLimit = -1;
    /** A replica's read limit (see ControlFile.Checkpoint), persisted with each checkpoint; MAX_VALUE for a primary. */
    private final LongSupplier readLimit;
    private volatile long durableScanStart;

    public Checkpointer(ControlFile controlFile, SegmentRegistry registry, Position flushed,
                        SegmentLinks links, long logId, long durableScanStart, boolean durable,
                        LongSupplier readLimit) {
        this.readLimit = readLimit;
        this.durable = durable;
        this.controlFile = controlFile;
        this.registry = registry;
        this.flushed = flushed;
        this.links = links;
        this.logId = logId;
        this.durableScanStart = durableScanStart;
    }

    /** Writes a checkpoint if the flushed position (or a replica's read limit) moved since the last one. */
    public void checkpoint() {
        try {
            write(false);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Writes a checkpoint now (forced to disk before it returns). */
    public void write(boolean always) throws IOException {
        write(always, false);
    }

    /**
     * The last checkpoint of a clean close: every appended record is flushed ({@code flushed} is the log's end) and
     * nothing will be appended before the log is opened again, which then knows that no one (no replica) can hold a
     * byte beyond its end.
     */
    public void writeShutdown() throws IOException {
        write(true, true);
    }

    private synchronized void write(boolean always, boolean shutDown) throws IOException {
        long f = flushed.get();
        long limit = readLimit.getAsLong();
        if (!always && f == lastFlushed && limit == lastReadLimit) {
            return;
        }
        long start = registry.segmentStart(f);
        Long prev = links.firstPrev(start);
        if (prev == null) {
            return; // not reachable: every segment the tail entered recorded its first prev link
        }
        // Without real forces (SyncMethod.NONE) nothing is known to be on disk: record no flush point, so that
        // recovery after an OS crash treats whatever it finds as a torn tail rather than as corruption.
        // A read limit never passes the flushed position it is checkpointed with (what recovery keeps may end there).
        controlFile.write(new ControlFile.Checkpoint(logId, registry.segmentSize(), start, prev, durable ? f : 0, shutDown,
                limit == Long.MAX_VALUE ? limit : Math.min(limit, f)));
        lastFlushed = f;
        lastReadLimit = limit;
        durableScanStart = start;
        links.forgetBefore(start);
    }

    /**
     * A replica's rewind to {@code lsn}: a checkpoint whose flushed position (and read limit) is {@code lsn} and whose
     * scan starts at {@code lsn}'s segment, written before any byte beyond {@code lsn} is removed, so that no later
     * recovery takes the removed bytes' absence for damage below a flush point.
     *
     * @param firstPrev      the prev link of the first record of {@code lsn}'s segment
     * @param movePositions  moves the log's positions back to {@code lsn}; run under this checkpointer's lock, so that
     *                       no periodic checkpoint records the old flush point after it
     */
    public synchronized void rewind(long lsn, long firstPrev, Runnable movePositions) throws IOException {
        movePositions.run();
        long start = registry.segmentStart(lsn);
        links.rewindTo(start, firstPrev);
        controlFile.write(new ControlFile.Checkpoint(logId, registry.segmentSize(), start, firstPrev, durable ? lsn : 0,
                false, Math.min(readLimit.getAsLong(), lsn)));
        lastFlushed = lsn;
        lastReadLimit = -1;
        durableScanStart = start;
    }

    /** The scan start of the last checkpoint on disk: segments from it on must never be removed. */
    public long durableScanStart() {
        return durableScanStart;
    }
}
