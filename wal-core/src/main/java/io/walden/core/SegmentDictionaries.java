package io.walden.core;

import io.walden.core.record.ControlRecord;
import io.walden.core.record.RecordCheck;
import io.walden.core.record.RecordCursor;
import io.walden.core.record.RecordDescriptor;
import io.walden.core.record.ZstdDictionary;
import io.walden.core.segment.SegmentHeaderDescriptor;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The zstd dictionaries readers have met, by id (docs/format.md, "zstd dictionaries"). A reader that meets a frame
 * naming a dictionary it does not know walks the record's own segment from its first record up to the record, where
 * the writer put a copy, and remembers each dictionary found. One walk per dictionary and log, in the common case.
 *
 * <p>Only published records are walked (below the reader's position, which is below its visibility limit), and
 * every one is checked (CRC-32C and prev link included) before a dictionary is taken from it.
 *
 * <p>Thread-safety: any number of readers at once (the map is concurrent; a walk uses only the caller's view).
 */
final class SegmentDictionaries {
    private final Map<Long, ZstdDictionary> known = new ConcurrentHashMap<>();

    /**
     * @param view     a view of the whole segment, owned by the caller
     * @param startLsn the segment's start LSN
     * @param before   the offset of the record that names the dictionary
     * @return the dictionary with zstd id {@code id}, or null when its segment holds none before the record
     */
    ZstdDictionary find(long id, ByteBuffer view, long startLsn, long before) {
        ZstdDictionary d = known.get(id);
        if (d == null) {
            walk(view, startLsn, before);
            d = known.get(id);
        }
        return d;
    }

    private void walk(ByteBuffer view, long startLsn, long before) {
        each(view, startLsn, before, d -> known.putIfAbsent(d.id(), d));
    }

    /** The last dictionary stored in a segment below offset {@code before}, or null. */
    static ZstdDictionary newestIn(ByteBuffer view, long startLsn, long before) {
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
            if (cursor.flags() == RecordDescriptor.FLAG_CONTROL) {
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
