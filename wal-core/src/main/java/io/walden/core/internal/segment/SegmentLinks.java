package io.walden.core.internal.segment;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The prev link of each recent segment's first record: the LSN of the record before it (the previous segment's closing
 * record). A checkpoint stores the one of its scan start's segment, so that recovery can prove the record chain from
 * there (docs/format.md, "Control file"). One table per log, and every change to it is one of the four below.
 *
 * <p>Who changes it: a roll records the new segment before the closing record is published, so before anyone can
 * read past it ({@code commit.SegmentRoll}); a replica's write stage records each segment its primary's bytes
 * begin ({@code commit.ReplicatedAppends}); a checkpoint forgets the segments before its scan start, and a rewind cuts
 * the table back to the segment it rewinds into ({@code recovery.Checkpointer}).
 *
 * <p>Thread-safety: any thread; each operation is atomic on its own (a concurrent map). Not final only so that a test
 * can make a roll's bookkeeping throw (RollFailureTest).
 */
public class SegmentLinks {
    private final Map<Long, Long> firstPrev;

    /** The table recovery rebuilt: segment start → its first record's prev link. */
    public SegmentLinks(Map<Long, Long> recovered) {
        this.firstPrev = new ConcurrentHashMap<>(recovered);
    }

    /** The segment starting at {@code segmentStart} begins with a record whose prev link is {@code prevLsn}. */
    public void begins(long segmentStart, long prevLsn) {
        firstPrev.put(segmentStart, prevLsn);
    }

    /** The prev link of the first record of the segment starting at {@code segmentStart}, or null when not known. */
    public Long firstPrev(long segmentStart) {
        return firstPrev.get(segmentStart);
    }

    /** A checkpoint's scan starts at {@code segmentStart}: no one needs the segments before it any more. */
    public void forgetBefore(long segmentStart) {
        firstPrev.keySet().removeIf(k -> k < segmentStart);
    }

    /** A rewind into the segment starting at {@code segmentStart}: the segments after it are gone. */
    public void rewindTo(long segmentStart, long prevLsn) {
        firstPrev.put(segmentStart, prevLsn);
        firstPrev.keySet().removeIf(k -> k > segmentStart);
    }
}
