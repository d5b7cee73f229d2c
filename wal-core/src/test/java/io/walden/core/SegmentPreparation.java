package io.walden.core;

import io.walden.core.internal.record.RecordDescriptor;

import java.nio.ByteBuffer;
import java.util.concurrent.Callable;
import static io.walden.core.internal.PartsForTests.preparer;
import static io.walden.core.internal.PartsForTests.registry;

/**
 * For tests in any module: stops a log's segment preparation for a while, so that the next append that needs a new
 * segment must wait (the situation an event loop must never wait in).
 */
public final class SegmentPreparation {
    private SegmentPreparation() {
    }

    /**
     * Fills the current and the already prepared segment with records of {@code filler} bytes (durability off) until
     * the next append would need a segment that is not prepared, runs {@code whileHeld} while nothing more can be
     * prepared, then lets preparation go on.
     */
    public static <T> T holdAtFullSegment(Wal wal, int filler, Callable<T> whileHeld) throws Exception {
        // The next segment is prepared once the current one is half written: get there and wait until it is, so that
        // the hold below stops the one after.
        long half = wal.config().segmentSize() / 2;
        Eventually.waitUntil("the current segment half written", () -> {
            while (wal.insertLsn() - registry(wal.parts()).segmentStart(wal.insertLsn()) < half
                    && wal.nonWaiting().tryAppendAsync(0, ByteBuffer.wrap(new byte[filler]), Durability.OFF) != null) {
                // filled on
            }
            return wal.insertLsn() - registry(wal.parts()).segmentStart(wal.insertLsn()) >= half;
        });
        Eventually.waitUntil("the next segment prepared", () -> registry(wal.parts()).get(
                registry(wal.parts()).segmentStart(wal.insertLsn()) + wal.config().segmentSize()) != null);
        synchronized (preparer(wal.parts())) {
            long size = wal.config().segmentSize();
            // Fill until an append would need the segment that cannot be prepared now; an append refused before
            // that was refused for want of room in the WAL buffers, which the background writer makes.
            Eventually.waitUntil("the current segment full", () -> {
                while (wal.nonWaiting().tryAppendAsync(0, ByteBuffer.wrap(new byte[filler]), Durability.OFF) != null) {
                    // filled on
                }
                long insert = wal.insertLsn();
                long next = registry(wal.parts()).segmentStart(insert) + size;
                boolean needsNext = insert + RecordDescriptor.aligned(24 + filler) + 24 > next;
                return needsNext && registry(wal.parts()).get(next) == null;
            });
            return whileHeld.call();
        }
    }
}
