package io.walden.core.internal;

import io.walden.core.internal.record.RecordCursor;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.segment.RecordBoundaries;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;
import io.walden.core.internal.segment.SegmentRegistry;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * Seek by time (docs/format.md, "Finding a record by time"): the first record whose time is at or after an instant,
 * without a scan of the log. Times never decrease in LSN order (RecordClock), so both steps are binary searches:
 *
 * <ol>
 *   <li>over the segments, by the time of each one's first timed record, which sits right after its header (one or
 *       two record headers read per segment probed: O(log segments));</li>
 *   <li>inside the one segment that may hold the answer, over its 4 KiB pages, by the time of the record at each
 *       page's last boundary ({@link RecordBoundaries}, whose sparse index is built by one walk of the segment's
 *       length words the first time a reader or a seek needs it), then a walk of at most a page or two.</li>
 * </ol>
 *
 * <p>Nothing is stored beside the segments: the index is the records' own times and the boundaries' index, which
 * memory rebuilds from the segment, so retention and the archive carry it with the segments, and there is no file to
 * lose or tear. Records without a time (format 1, written before the upgrade, so all before the timed ones) count as
 * older than any time; padding records are stepped over.
 *
 * <p>Thread-safety: any thread; it reads published records below the written position only, entering each segment
 * it reads (a segment removed meanwhile makes it start over).
 */
public final class TimeIndex {
    private static final int FIRST_RECORD = SegmentHeaderDescriptor.LENGTH;
    /** No timed record below the limit (RecordCursor.firstTimed). */
    private static final long NONE = -1;

    private final SegmentRegistry registry;
    private final LongSupplier written;

    public TimeIndex(SegmentRegistry registry, LongSupplier written) {
        this.registry = registry;
        this.written = written;
    }

    /**
     * The LSN of the first record whose time is at or after {@code micros}; when no record written so far is that
     * recent, the written position (the log's end once appends in flight are written out).
     */
    public long lsnAt(long micros) {
        while (true) {
            long end = written.getAsLong();
            List<Segment> segments = registry.snapshot();
            int used = 0;
            while (used < segments.size() && segments.get(used).startLsn() < end) {
                used++;
            }
            long found = search(segments.subList(0, used), micros, end);
            if (found != RETRY) {
                return found;
            }
        }
    }

    /** {@link #search}: a segment was removed meanwhile (answers are LSNs, never negative). */
    private static final long RETRY = -1;
    /** {@link #timeOfFirst}: the segment was removed meanwhile. */
    private static final long GONE = Long.MIN_VALUE;
    /** {@link #timeOfFirst}: the segment's first record has no time (format 1): older than any time. */
    private static final long UNTIMED = Long.MIN_VALUE + 1;

    /** The answer over {@code segments} (ascending, all below {@code end}), or {@link #RETRY} when one was removed. */
    private long search(List<Segment> segments, long micros, long end) {
        // The first segment whose first timed record is at or after the time: the answer is in it or in the one before.
        int lo = 0;
        int hi = segments.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            long first = timeOfFirst(segments.get(mid), end);
            if (first == GONE) {
                return RETRY;
            }
            if (first >= micros) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        if (lo > 0) {
            long inPrevious = within(segments.get(lo - 1), micros, end);
            if (inPrevious != NONE) {
                return inPrevious;
            }
        }
        for (int i = lo; i < segments.size(); i++) { // a segment of padding alone (aborted claims) is stepped over
            long inThis = within(segments.get(i), micros, end);
            if (inThis != NONE) {
                return inThis;
            }
        }
        return end;
    }

    /**
     * The search key of {@code s}: the time of its first record that is not padding; {@link #UNTIMED} when that record
     * has no time (format 1: older than any time, as every untimed record before it); Long.MAX_VALUE when the segment
     * holds nothing but padding below {@code end} (so the search looks before it); {@link #GONE} when it was removed.
     */
    private long timeOfFirst(Segment segment, long end) {
        Segment s = registry.enter(segment); // mapped again if it was parked
        if (s == null) {
            return GONE;
        }
        try {
            ByteBuffer view = s.newView();
            RecordCursor walk = new RecordCursor().start(view, 0, FIRST_RECORD, -1);
            for (long at = FIRST_RECORD, limit = limit(s, end); at >= 0 && at < limit; at = walk.at(at).nextPublished()) {
                int flags = view.getShort((int) at + RecordDescriptor.FLAGS_OFFSET) & 0xFFFF;
                if ((flags & RecordDescriptor.FLAG_TIME) != 0) {
                    return view.getLong((int) at + RecordDescriptor.TIME_OFFSET);
                }
                if ((flags & RecordDescriptor.FLAG_PADDING) == 0) {
                    return UNTIMED;
                }
            }
            return Long.MAX_VALUE;
        } finally {
            s.exit();
        }
    }

    /** The LSN of the first record of {@code s} below {@code end} whose time is at or after {@code micros}, or NONE. */
    private long within(Segment segment, long micros, long end) {
        Segment s = registry.enter(segment);
        if (s == null) {
            return NONE; // removed: nothing of it can be read any more
        }
        try {
            long limit = limit(s, end);
            long from = s.boundaries().lastBoundaryBeforeTime(micros, limit);
            long at = RecordCursor.firstTimed(s.newView(), from, limit, micros);
            return at == NONE ? NONE : s.startLsn() + at;
        } finally {
            s.exit();
        }
    }

    private static long limit(Segment s, long end) {
        return Math.min(s.size(), end - s.startLsn());
    }

    /**
     * The time of the last timed record below {@code end} (a log reopened goes on from it: RecordClock), or
     * {@link RecordCursor#NO_TIME}. Walks the newest segments' length words, back to the first that holds one.
     */
    public long latestTime(long end) {
        List<Segment> segments = registry.snapshot();
        for (int i = segments.size() - 1; i >= 0; i--) {
            if (segments.get(i).startLsn() >= end) {
                continue;
            }
            Segment s = registry.enter(segments.get(i));
            if (s == null) {
                continue;
            }
            try {
                ByteBuffer view = s.newView();
                long limit = limit(s, end);
                long last = RecordCursor.NO_TIME;
                RecordCursor walk = new RecordCursor().start(view, 0, FIRST_RECORD, -1);
                for (long at = FIRST_RECORD; at >= 0 && at < limit; at = walk.at(at).nextPublished()) {
                    if ((view.getShort((int) at + RecordDescriptor.FLAGS_OFFSET) & RecordDescriptor.FLAG_TIME) != 0) {
                        last = view.getLong((int) at + RecordDescriptor.TIME_OFFSET);
                    }
                }
                if (last != RecordCursor.NO_TIME) {
                    return last;
                }
            } finally {
                s.exit();
            }
        }
        return RecordCursor.NO_TIME;
    }

    /**
     * The time of the record at {@code lsn}, a record boundary below {@code end} (the written position); a closing
     * padding record counts as the next segment's first record. {@link RecordCursor#NO_TIME} when that record has no
     * time (format 1), or when it cannot be read (removed, or not written yet).
     */
    public long timeAt(long lsn, long end) {
        for (int hops = 0; hops < 2 && lsn < end; hops++) {
            Segment s = registry.enter(lsn);
            if (s == null) {
                return RecordCursor.NO_TIME;
            }
            try {
                ByteBuffer view = s.newView();
                int o = (int) (lsn - s.startLsn());
                int flags = view.getShort(o + RecordDescriptor.FLAGS_OFFSET) & 0xFFFF;
                if ((flags & RecordDescriptor.FLAG_TIME) != 0) {
                    return view.getLong(o + RecordDescriptor.TIME_OFFSET);
                }
                if ((flags & RecordDescriptor.FLAG_PADDING) == 0) {
                    return RecordCursor.NO_TIME;
                }
                lsn = s.endLsn() + FIRST_RECORD; // a closing record: the next record opens the next segment
            } finally {
                s.exit();
            }
        }
        return RecordCursor.NO_TIME;
    }
}
