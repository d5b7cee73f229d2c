package io.walden.core.internal.segment;

import io.walden.core.WalException;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.LongSupplier;

/**
 * The live (mapped, not truncated) segments of one log, found by LSN.
 *
 * <p>The append path looks segments up through a small ring indexed by segment number, one array load
 * and one compare, no allocation; everything else (readers of old segments, truncation, tools) goes
 * through a sorted map. A segment is in both from {@link #add} until {@link #remove}.
 *
 * <p>A segment in the map may be parked (its mapping and descriptors given back, see {@link Segment}): it stays in the
 * map, for its range and its file's name, and leaves the ring. {@link #enter} maps it again as a new {@code Segment}
 * in its place. The append path never meets a parked segment: only segments below the log's flushed position are
 * parked ({@link OpenSegments}), and the appenders, the writer and the flush leader work above it.
 *
 * <p>Thread-safety: all methods are safe from any thread; {@link #add}, {@link #remove}, a park and a reopen hold
 * this object's lock, so that a segment removed is never mapped again behind its remover's back.
 */
public final class SegmentRegistry {
    private static final int RING_SIZE = 64;

    private final long segmentSize;
    private final int shift;
    private final ConcurrentSkipListMap<Long, Segment> live = new ConcurrentSkipListMap<>();
    private final AtomicReferenceArray<Segment> ring = new AtomicReferenceArray<>(RING_SIZE);
    /** Guarded by this object. */
    private long reopened;

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

    /**
     * The live segment holding {@code lsn}, mapped (again, if it was parked), or null (not prepared yet, or truncated).
     * For the append path, the writer and the flush leader, which touch a segment without entering it: they find it
     * in the ring, and meet a parked one only after an idle log parked the segments it writes into, while nobody was
     * inside the log ({@link OpenSegments#parkQuiescent}); readers {@link #enter} instead.
     *
     * @throws WalException when a parked segment's file cannot be mapped again (no descriptor left, say)
     */
    public Segment get(long lsn) {
        Segment s = ring.get(slot(lsn));
        if (s != null && s.contains(lsn)) {
            return s;
        }
        Map.Entry<Long, Segment> e = live.floorEntry(lsn);
        if (e == null || !e.getValue().contains(lsn)) {
            return null;
        }
        Segment found = e.getValue();
        return found.isParked() ? reopen(found) : found;
    }

    public synchronized void add(Segment segment) {
        live.put(segment.startLsn(), segment);
        if (segment.isOpen()) {
            ring.set(slot(segment.startLsn()), segment);
        }
    }

    /**
     * Removes the segment starting where {@code segment} starts: {@code segment} itself, or the mapping that replaced it
     * when it was parked. The caller disposes of (or marks removed) what this returns.
     *
     * @return the segment removed, or null when none starts there any more
     */
    public synchronized Segment remove(Segment segment) {
        Segment current = live.remove(segment.startLsn());
        if (current != null) {
            ring.compareAndSet(slot(current.startLsn()), current, null);
        }
        return current;
    }

    /**
     * Enters the live segment holding {@code lsn} as a reader ({@link Segment#tryEnter}), mapping it again if it was
     * parked; the caller {@link Segment#exit()}s the segment returned.
     *
     * @return the segment entered, or null when none holds {@code lsn} (not prepared yet, or removed)
     * @throws WalException when a parked segment's file cannot be mapped again (no descriptor left, say)
     */
    public Segment enter(long lsn) {
        Segment s = get(lsn);
        return s == null ? null : enter(s);
    }

    /**
     * Enters {@code segment}, or the segment that replaced it when it was parked.
     *
     * @return the segment entered (the caller exits it), or null when it was removed
     */
    public Segment enter(Segment segment) {
        for (Segment s = segment; s != null; s = reopen(s)) {
            if (s.tryEnter()) {
                return s;
            }
            if (!s.isParked()) {
                return null; // removed
            }
        }
        return null;
    }

    /** Maps a parked segment again, in its place; null when it was removed meanwhile (its file renamed away). */
    private synchronized Segment reopen(Segment parked) {
        Segment now = live.get(parked.startLsn());
        if (now != parked) {
            return now; // mapped again by another reader, or removed (null)
        }
        try {
            Segment fresh = Segment.map(parked.path(), parked.startLsn(), segmentSize);
            live.replace(parked.startLsn(), parked, fresh);
            ring.compareAndSet(slot(fresh.startLsn()), null, fresh); // a rewind may make it the log's end again
            reopened++;
            return fresh;
        } catch (NoSuchFileException gone) {
            return null; // renamed away by a truncation that is about to remove it
        } catch (IOException e) {
            throw new WalException("could not map segment " + parked.path() + " again: " + e.getMessage(), e);
        }
    }

    /**
     * Parks {@code segment} if it is still this registry's, nobody is inside and it was not removed (see {@link
     * Segment#park}). The caller has made sure no thread touches it without entering.
     */
    synchronized boolean park(Segment segment, LongSupplier parkableBelow) {
        if (live.get(segment.startLsn()) != segment || !segment.park(parkableBelow)) {
            return false;
        }
        ring.compareAndSet(slot(segment.startLsn()), segment, null);
        return true;
    }

    /**
     * Parks {@code segment} whatever its position, if nobody is inside it: only while nobody is inside the log either
     * (an idle log, paused, its writes locked: see {@link OpenSegments#parkQuiescent}), since the append path touches
     * the segments it writes into without entering them.
     */
    synchronized boolean parkQuiescent(Segment segment) {
        return park(segment, () -> Long.MAX_VALUE);
    }

    /** How many times a parked segment was mapped again for a reader or an append. */
    public synchronized long reopened() {
        return reopened;
    }

    private int slot(long startLsn) {
        return (int) (startLsn >>> shift) & (RING_SIZE - 1);
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
