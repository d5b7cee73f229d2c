package io.walden.core.internal.commit;

import io.walden.core.Lsn;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;
import io.walden.core.internal.segment.SegmentRegistry;

import java.io.IOException;
import java.nio.channels.FileChannel;

/**
 * Writes published records from the WAL buffers into the segment files with positional writes (PostgreSQL's
 * XLogWrite), zeroes the memory it wrote, and then moves the written position: the end of what the files hold.
 * Readers at WRITTEN visibility, boundary proofs and everything else that reads the files through their mappings
 * stop at that position, so no one reads a word of a file while a write may still be copying it; appenders reuse
 * ring memory only below it ({@link WalBuffers}).
 *
 * <p>Threading: one writer at a time, the holder of the {@link WalWriteLock} (the flush leader before its
 * force, the background writer for records nobody waits for, or an appender that needs room in the ring). The
 * written position is published with a volatile store after the writes returned and the memory was zeroed.
 */
public final class LogWriter {
    private static final int SEGMENT_HEADER = SegmentHeaderDescriptor.LENGTH;

    private final SegmentRegistry registry;
    private final WalBuffers ring;
    private final Position written;
    private final ReadNotifier notifier;
    /** Write through each segment's DSYNC channel (open_datasync): a write returns once durable. */
    private final boolean writeThrough;
    public LogWriter(SegmentRegistry registry, WalBuffers ring, Position written, ReadNotifier notifier, boolean writeThrough) {
        this.registry = registry;
        this.ring = ring;
        this.writeThrough = writeThrough;
        this.written = written;
        this.notifier = notifier;
    }

    public long writtenLsn() {
        return written.get();
    }

    /** A replica's rewind (holder of the write lock): the files hold nothing from {@code lsn} on any more. */
    public void rewind(long lsn) {
        written.set(lsn);
    }

    /**
     * Writes {@code [written, target)} into the files ({@code target} a published position: a record boundary, or
     * the first record's LSN of a segment), then zeroes what it wrote in the ring, then moves the written position.
     * Nothing is zeroed unless every write succeeded: a writer that fails leaves the ring as it was, so that no later
     * write can put zeros where records belong (and the log is failed by the caller anyway).
     */
    public void writeUpTo(long target) throws IOException {
        long from = written.get();
        if (target <= from) {
            return;
        }
        long size = registry.segmentSize();
        for (long start = registry.segmentStart(from); start < target; start += size) {
            Segment seg = registry.get(start);
            if (seg == null) {
                throw new IOException("segment " + Lsn.format(start) + " vanished while being written");
            }
            FileChannel file = writeThrough ? seg.dsyncChannel() : seg.channel();
            forEachRun(from, target, start, file);
        }
        for (long start = registry.segmentStart(from); start < target; start += size) {
            forEachRun(from, target, start, null);
        }
        written.advanceTo(target);
        notifier.signal();
    }

    /**
     * Walks the ring bytes for LSNs {@code [from, target)} within the segment starting at {@code start}, lap by lap:
     * up to a lap's end, or through the slack to the end of the record that runs past it. Writes each run into
     * {@code file}, or, when {@code file} is null, zeroes it.
     */
    private void forEachRun(long from, long target, long start, FileChannel file) throws IOException {
        long lo = Math.max(from, start + SEGMENT_HEADER); // the header is the file's own
        long hi = Math.min(target, start + registry.segmentSize());
        while (lo < hi) {
            long lapEnd = ring.lapEndAfter(lo);
            long runEnd = hi <= lapEnd ? hi : Math.min(hi, ring.spillEnd(lapEnd));
            long r = ring.offset(lo);
            if (file != null) {
                ring.writeTo(file, lo - start, r, runEnd - lo);
            } else {
                ring.zero(r, r + (runEnd - lo));
            }
            lo = runEnd;
        }
    }
}
