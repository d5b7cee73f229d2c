package io.walden.core.internal;

import io.walden.core.internal.record.ControlRecord;
import io.walden.core.internal.record.RecordCheck;
import io.walden.core.internal.record.RecordCursor;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.record.ZstdDictionary;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;
import io.walden.core.internal.segment.SegmentRegistry;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Where readers find the zstd dictionary a record names (docs/format.md, "zstd dictionaries"): only among the copies
 * its own segment holds before it, as the format requires, so a record whose segment lacks its dictionary is never
 * decoded, whatever other segments hold. For each of the last segments looked in it remembers how far it walked and
 * where each dictionary's first copy is, so a reader pays one walk of a segment's prefix, once.
 *
 * <p>Only published records are walked (below the record being read, which is below the reader's visibility limit),
 * and every one is checked (CRC-32C and prev link included) before a dictionary is taken from it. A rewind forgets
 * what was walked past its point ({@link #forgetFrom}).
 *
 * <p>Thread-safety: any number of readers; lookups are serialised (a miss walks while holding the lock: misses are
 * one per segment and dictionary, hits are a map lookup).
 */
public final class SegmentDictionaries {
    private static final int SEGMENTS_REMEMBERED = 16;

    /** What a walk of one segment found so far. */
    private static final class Walked {
        long walkedTo = SegmentHeaderDescriptor.LENGTH;
        /** The prev link the record at walkedTo must carry; -1 for the segment's first (its predecessor is not checked). */
        long expectedPrev = -1;
        final Map<Long, Long> firstCopyAt = new HashMap<>();
    }

    private final Map<Long, Walked> segments = new LinkedHashMap<>(SEGMENTS_REMEMBERED, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Walked> eldest) {
            return size() > SEGMENTS_REMEMBERED;
        }
    };
    /** One object per dictionary met, by id (its digested form is built once). */
    private final Map<Long, ZstdDictionary> known = new HashMap<>();
    private final RecordCursor cursor = new RecordCursor();

    /**
     * @param view     a view of the whole segment, owned by the caller
     * @param startLsn the segment's start LSN
     * @param before   the offset of the record that names the dictionary (a record boundary)
     * @return the dictionary with zstd id {@code id}, or null when its segment holds no copy of it before the record
     */
    public synchronized ZstdDictionary find(long id, ByteBuffer view, long startLsn, long before) {
        Walked w = segments.computeIfAbsent(startLsn, s -> new Walked());
        Long at = w.firstCopyAt.get(id);
        if (at == null && w.walkedTo < before) {
            cursor.start(view, startLsn, w.walkedTo, w.expectedPrev);
            while (cursor.offset() < before && cursor.check() == RecordCheck.VALID) {
                ZstdDictionary d = dictionaryAtCursor();
                if (d != null) {
                    known.putIfAbsent(d.id(), d);
                    w.firstCopyAt.putIfAbsent(d.id(), cursor.offset());
                }
                boolean closing = cursor.advance();
                w.walkedTo = cursor.offset();
                w.expectedPrev = cursor.expectedPrev();
                if (closing) {
                    break;
                }
            }
            at = w.firstCopyAt.get(id);
        }
        return at != null && at < before ? known.get(id) : null;
    }

    /** The log was rewound to {@code lsn}: what was walked at or past it may be gone. */
    public synchronized void forgetFrom(long lsn) {
        segments.entrySet().removeIf(e -> e.getKey() + e.getValue().walkedTo > lsn);
    }

    private ZstdDictionary dictionaryAtCursor() {
        return (cursor.flags() & RecordDescriptor.FLAG_CONTROL) != 0 ? ControlRecord.decodeDictionary(cursor.payload()) : null;
    }

    /**
     * The newest zstd dictionary the segment of a log's written end ({@code end}) holds, or null (DictionaryTrainer looks
     * here, in the background, before its first training: a log reopened, or a replica promoted, goes on with the
     * dictionary it carries). Only that segment is walked, and only its written records.
     */
    static ZstdDictionary newestInLog(SegmentRegistry registry, long end) {
        Segment seg = registry.enter(end);
        if (seg == null) {
            return null;
        }
        try {
            return newestIn(seg.newView(), seg.startLsn(), end - seg.startLsn());
        } finally {
            seg.exit();
        }
    }

    /** The last dictionary stored in a segment below offset {@code before}, or null (for the writer, at open). */
    public static ZstdDictionary newestIn(ByteBuffer view, long startLsn, long before) {
        ZstdDictionary[] newest = new ZstdDictionary[1];
        each(view, startLsn, before, d -> newest[0] = d);
        return newest[0];
    }

    /**
     * Each dictionary stored in a segment below offset {@code before}, in LSN order: the segment's records are walked
     * and checked from its first one (whose predecessor, in the segment before, is not checked here).
     */
    private static void each(ByteBuffer view, long startLsn, long before, Consumer<ZstdDictionary> found) {
        RecordCursor cursor = new RecordCursor().start(view, startLsn, SegmentHeaderDescriptor.LENGTH, -1);
        while (cursor.offset() < before && cursor.check() == RecordCheck.VALID) {
            if ((cursor.flags() & RecordDescriptor.FLAG_CONTROL) != 0) {
                ZstdDictionary d = ControlRecord.decodeDictionary(cursor.payload());
                if (d != null) {
                    found.accept(d);
                }
            }
            if (cursor.advance()) {
                return;
            }
        }
    }
}
