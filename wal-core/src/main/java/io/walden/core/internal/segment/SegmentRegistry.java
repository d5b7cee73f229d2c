package io.walden.core.internal.segment;

import io.walden.core.WalException;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;
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
 * map, for its range and its file's name, and leaves the ring. {@link #enter} (readers) and {@link #get} (the append
 * path) map it again as a new {@code Segment} in its place. Sealed segments are parked only below the log's flushed
 * position, where the appenders, the writer and the flush leader never go; the segments a log writes into are parked
 * only while nobody is inside the log ({@link OpenSegments#parkQuiescent}), so the append path meets a parked segment
 * only at its first append or flush after that, through the map, and maps it again there.
 *
 * <p>Thread-safety: all methods are safe from any thread; {@link #add}, {@link #remove}, a rename out of the log, a
 * park and a mapping again hold this object's lock, so that a segment removed is never mapped again behind its
 * remover's back, nor a renamed file's name mapped (Chronicle's mapping would create an empty file under it).
 */
public final class SegmentRegistry {
    private static final int RING_SIZE = 64;

    private final long segmentSize;
    private final int shift;
    private final ConcurrentSkipListMap<Long, Segment> live = new ConcurrentSkipListMap<>();
    private final AtomicReferenceArray<Segment> ring = new AtomicReferenceArray<>(RING_SIZE);
    /** Guarded by this object. */
    private long reopened;
    /** Where this log's mappings are counted: its store's count ({@link OpenSegments}); null until it is registered. */
    private AtomicInteger mappedCount;

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
        if (!found.isParked()) {
            return found;
        }
        Segment mapped = enter(found);
        if (mapped != null) {
            mapped.exit(); // the caller works above the flushed position (or alone in the log): no sweep parks it there
        }
        return mapped;
    }

    public synchronized void add(Segment segment) {
        if (mappedCount != null) {
            segment.countIn(mappedCount);
        }
        live.put(segment.startLsn(), segment);
        if (segment.isOpen()) {
            ring.set(slot(segment.startLsn()), segment);
        }
    }

    /**
     * Counts this log's mappings in {@code count} from now on, those it holds now included (OpenSegments.register).
     */
    synchronized void countIn(AtomicInteger count) {
        mappedCount = count;
        for (Segment s : live.values()) {
            s.countIn(count);
        }
    }

    /**
     * Renames {@code segment}'s file to {@code to} (durably: SegmentFiles.rename forces the directory) and removes the
     * segment, as one step against a reader mapping it again: that mapping would recreate the file under its old name.
     *
     * @return the segment removed (see {@link #remove})
     */
    public synchronized Segment renameAndRemove(Segment segment, Path dir, Path to) throws IOException {
        SegmentFiles.rename(dir, segment.path(), to);
        return remove(segment);
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
        Map.Entry<Long, Segment> e = live.floorEntry(lsn);
        return e == null || !e.getValue().contains(lsn) ? null : enter(e.getValue());
    }

    /**
     * Enters {@code segment}, or the segment that replaced it when it was parked (mapped again here if need be).
     *
     * @return the segment entered (the caller exits it), or null when it was removed
     */
    public Segment enter(Segment segment) {
        Segment s = segment;
        while (s != null) {
            if (s.tryEnter()) {
                return s;
            }
            if (s.isRemovedOnceSettled()) {
                return null;
            }
            if (s.isParked()) {
                synchronized (this) {
                    Segment now = live.get(s.startLsn());
                    if (now == s) {
                        // Entered under this lock: no sweep parks the new mapping before its reader is inside.
                        return mapAgainEntered(s);
                    }
                    s = now; // mapped again by another thread (try it), or removed (null)
                }
            }
            // else a park that found the segment still needed and undid itself: try again
        }
        return null;
    }

    /** Maps a parked segment again, in its place, and enters it; null when its file was renamed away (removed). */
    private Segment mapAgainEntered(Segment parked) {
        assert Thread.holdsLock(this);
        Segment fresh;
        try {
            fresh = Segment.map(parked.path(), parked.startLsn(), segmentSize);
        } catch (NoSuchFileException gone) {
            return null; // cannot happen while renames take this lock; a file removed by hand reads as removed
        } catch (IOException e) {
            throw new WalException("could not map segment " + parked.path() + " again: " + e.getMessage(), e);
        }
        if (mappedCount != null) {
            fresh.countIn(mappedCount);
        }
        fresh.tryEnter();
        live.replace(parked.startLsn(), parked, fresh);
        // Back into the ring unless a newer segment (the log's end, RING_SIZE segments on) holds the slot: after a
        // rewind, or an idle log's first append, the append path finds it there again.
        int slot = slot(fresh.startLsn());
        for (Segment cur; ((cur = ring.get(slot)) == null || cur.startLsn() < fresh.startLsn())
                && !ring.compareAndSet(slot, cur, fresh); ) {
            // lost a race with add() or a park: look again
        }
        reopened++;
        return fresh;
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
