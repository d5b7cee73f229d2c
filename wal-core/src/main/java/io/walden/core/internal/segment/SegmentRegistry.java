package io.walden.core.internal.segment;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The live (mapped, not truncated) segments of one log, found by LSN.
 *
 * <p>The append path looks segments up through a small ring indexed by segment number, one array load
 * and one compare, no allocation; everything else (readers of old segments, truncation, tools) goes
 * through a sorted map. A segment is in both from {@link #add} until {@link #remove}.
 *
 * <p>Thread-safety: all methods are safe from any thread; {@link #add} and {@link #remove} are called by
 * one thread at a time (the open path, then the segment preparer and truncation under the Wal's admin lock).
 */
public final class SegmentRegistry {
    private static final int RING_SIZE = 64;

    private final long segmentSize;
    private final int shift;
    private final ConcurrentSkipListMap<Long, Segment> live = new ConcurrentSkipListMap<>();
    private final AtomicReferenceArray<Segment> ring = new AtomicReferenceArray<>(RING_SIZE);

    public SegmentRegistry(long segmentSize) {
        this.segmentSize = segmentSize;
        this.shift = Long.numberOfTrailingZeros(segmentSize);
    }

    public long segmentSize() {
        return segmentSize;
    }

    /** Start LSN of the segment that holds {@code lsn}. */
    public long segmentStart(long lsn) {
        return lsn & -segmentSize;
    }

    /** The live segment holding {@code lsn}, or null (not prepared yet, or truncated). */
    public Segment get(long lsn) {
        Segment s = ring.get((int) (lsn >>> shift) & (RING_SIZE - 1));
        if (s != null && s.contains(lsn)) {
            return s;
        }
        Map.Entry<Long, Segment> e = live.floorEntry(lsn);
        return e != null && e.getValue().contains(lsn) ? e.getValue() : null;
    }

    public void add(Segment segment) {
        live.put(segment.startLsn(), segment);
        ring.set((int) (segment.startLsn() >>> shift) & (RING_SIZE - 1), segment);
    }

    public void remove(Segment segment) {
        live.remove(segment.startLsn(), segment);
        ring.compareAndSet((int) (segment.startLsn() >>> shift) & (RING_SIZE - 1), segment, null);
    }

    public Segment oldest() {
        Map.Entry<Long, Segment> e = live.firstEntry();
        return e == null ? null : e.getValue();
    }

    public Segment newest() {
        Map.Entry<Long, Segment> e = live.lastEntry();
        return e == null ? null : e.getValue();
    }

    public int size() {
        return live.size();
    }

    /** A snapshot of the live segments, ascending. */
    public List<Segment> snapshot() {
        return new ArrayList<>(live.values());
    }
}
