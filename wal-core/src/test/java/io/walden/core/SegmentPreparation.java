package io.walden.core;

import io.walden.core.internal.record.RecordDescriptor;

import java.nio.ByteBuffer;
import java.util.concurrent.Callable;

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
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (wal.parts().registry.get(wal.parts().registry.segmentStart(wal.insertLsn()) + wal.config().segmentSize()) == null) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the next segment was not prepared within 20 s");
            }
            Thread.sleep(5); // prepared one ahead: wait until it is, so that the hold below stops the one after
        }
        synchronized (wal.parts().preparer) {
            long size = wal.config().segmentSize();
            while (true) {
                if (wal.nonWaiting().tryAppendAsync(0, ByteBuffer.wrap(new byte[filler]), Durability.OFF) != null) {
                    continue; // fill until an append would need the segment that cannot be prepared now
                }
                long insert = wal.insertLsn();
                long next = wal.parts().registry.segmentStart(insert) + size;
                boolean needsNext = insert + RecordDescriptor.aligned(24 + filler) + 24 > next;
                if (needsNext && wal.parts().registry.get(next) == null) {
                    break;
                }
                Thread.sleep(1); // refused for want of room in the WAL buffers: the background writer makes some
            }
            return whileHeld.call();
        }
    }
}
