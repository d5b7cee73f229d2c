package io.walden.core.recovery;

import io.walden.core.commit.Position;
import io.walden.core.segment.SegmentRegistry;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

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
    private final Map<Long, Long> firstPrevBySegment;
    private final long logId;
    private final boolean durable;
    private long lastFlushed = -1;
    private volatile long durableScanStart;

    public Checkpointer(ControlFile controlFile, SegmentRegistry registry, Position flushed,
                        Map<Long, Long> firstPrevBySegment, long logId, long durableScanStart, boolean durable) {
        this.durable = durable;
        this.controlFile = controlFile;
        this.registry = registry;
        this.flushed = flushed;
        this.firstPrevBySegment = firstPrevBySegment;
        this.logId = logId;
        this.durableScanStart = durableScanStart;
    }

    /** Writes a checkpoint if the flushed position moved since the last one. */
    public void checkpoint() {
        try {
            write(false);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Writes a checkpoint now (forced to disk before it returns). */
    public synchronized void write(boolean always) throws IOException {
        long f = flushed.get();
        if (!always && f == lastFlushed) {
            return;
        }
        long start = registry.segmentStart(f);
        Long prev = firstPrevBySegment.get(start);
        if (prev == null) {
            return; // not reachable: every segment the tail entered recorded its first prev link
        }
        // Without real forces (SyncMethod.NONE) nothing is known to be on disk: record no flush point, so that
        // recovery after an OS crash treats whatever it finds as a torn tail rather than as corruption.
        controlFile.write(new ControlFile.Checkpoint(logId, registry.segmentSize(), start, prev, durable ? f : 0));
        lastFlushed = f;
        durableScanStart = start;
        firstPrevBySegment.keySet().removeIf(k -> k < start);
    }

    /** The scan start of the last checkpoint on disk: segments from it on must never be removed. */
    public long durableScanStart() {
        return durableScanStart;
    }
}
