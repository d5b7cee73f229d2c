package io.walden.core.commit;

import io.walden.core.Lsn;
import io.walden.core.segment.Segment;
import io.walden.core.segment.SegmentBuffers;
import io.walden.core.segment.SegmentHeaderDescriptor;
import io.walden.core.segment.SegmentRegistry;

import java.io.IOException;

/**
 * Writes published records from the WAL buffers into the segment files with positional writes (PostgreSQL's
 * XLogWrite), then moves the written position: the end of what the files hold. Readers at WRITTEN visibility,
 * boundary proofs and everything else that reads the files through their mappings stop at that position, so no
 * one reads a word of a file while a write may still be copying it.
 *
 * <p>Threading: one writer at a time, the holder of {@link GroupCommit}'s leader flag (the flush leader before its
 * force, or the background writer for records nobody waits for). The written position is published with a
 * volatile store after the writes returned.
 */
final class LogWriter {
    private static final int SEGMENT_HEADER = SegmentHeaderDescriptor.LENGTH;
    private final SegmentRegistry registry;
    private final SegmentBuffers buffers;
    private final Position written;
    private final ReadNotifier notifier;
    /** Write through each segment's DSYNC channel (open_datasync): a write returns once durable. */
    private final boolean writeThrough;

    LogWriter(SegmentRegistry registry, SegmentBuffers buffers, Position written, ReadNotifier notifier, boolean writeThrough) {
        this.writeThrough = writeThrough;
        this.registry = registry;
        this.buffers = buffers;
        this.written = written;
        this.notifier = notifier;
    }

    long writtenLsn() {
        return written.get();
    }

    /** Writes {@code [written, target)} into the files; a segment the file now holds whole gives back its buffer. */
    void writeUpTo(long target) throws IOException {
        long from = written.get();
        if (target <= from) {
            return;
        }
        long size = registry.segmentSize();
        for (long start = registry.segmentStart(from); start < target; start += size) {
            Segment seg = registry.get(start);
            if (seg == null || seg.buffer() == null) {
                throw new IOException("segment " + Lsn.format(start) + " vanished while being written");
            }
            long lo = Math.max(Math.max(from, start) - start, SEGMENT_HEADER); // the header is the file's own
            long hi = Math.min(target, start + size) - start;
            if (hi > lo) {
                seg.buffer().writeTo(writeThrough ? seg.dsyncChannel() : seg.channel(), lo, hi);
            }
            if (hi == size) {
                buffers.retire(seg);
            }
        }
        written.advanceTo(target);
        notifier.signal();
    }
}
