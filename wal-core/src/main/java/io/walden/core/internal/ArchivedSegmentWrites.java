package io.walden.core.internal;

import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;
import io.walden.core.replication.WriteStage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * {@link WriteStage#writeArchived}: a fetched archived segment's records written into a replica's log as if they had
 * been streamed. The file formats (docs/format.md) are read here, in the log, so that replication fetches objects and
 * never parses a segment itself.
 *
 * <p>Thread-safety: the one receiver thread of its write stage.
 */
final class ArchivedSegmentWrites {
    private final WriteStage writes;
    private final long segmentSize;
    private final long logId;
    /** Reused for every chunk, made at the first fetch; direct, so that reading and writing it copies nothing more. */
    private ByteBuffer chunk;

    ArchivedSegmentWrites(WriteStage writes, long segmentSize, long logId) {
        this.writes = writes;
        this.segmentSize = segmentSize;
        this.logId = logId;
    }

    /** See {@link WriteStage#writeArchived}. */
    long write(Path file, String name, long start, long end, long usableEnd, int chunkBytes) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = Math.min(ch.size(), usableEnd - start);
            ByteBuffer header = ByteBuffer.allocate(SegmentHeaderDescriptor.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(header, 0);
            header.flip();
            String problem = size < SegmentHeaderDescriptor.LENGTH ? "shorter than a segment header"
                    : SegmentHeaderDescriptor.validate(header, segmentSize, start, logId);
            if (problem != null) {
                throw new IOException("archived " + name + " cannot continue this log: " + problem);
            }
            // Read, not mapped: the file is replaced by the next fetch and deleted after the last, and a mapping would
            // keep its blocks (and address space) until a GC. Read in chunks of whole records, so that a segment of any
            // size costs one chunk of memory (or one record, when a record is larger).
            long offset = end - start;
            while (offset < size) {
                ByteBuffer records = wholeRecords(ch, offset, size, name, chunkBytes);
                if (records == null) {
                    break; // zeros: the archived head ends here
                }
                int length = records.remaining();
                writes.write(start + offset, records);
                offset += length;
            }
            if (offset == end - start) {
                return 0;
            }
            writes.flushWritten();
            return offset - (end - start);
        }
    }

    /**
     * The whole records of the archived file from {@code offset}, at most a chunk of them (or the one record there, when
     * it is larger); null when no record starts there. A length word no record can have is passed on as it is:
     * {@code writeReceived} refuses it with the record's LSN, and nothing of that chunk is kept.
     */
    private ByteBuffer wholeRecords(FileChannel ch, long offset, long size, String name, int chunkBytes) throws IOException {
        if (chunk == null || chunk.capacity() != chunkBytes) {
            chunk = ByteBuffer.allocateDirect(chunkBytes).order(ByteOrder.LITTLE_ENDIAN);
        }
        int length = (int) Math.min(chunk.capacity(), size - offset);
        read(ch, chunk.clear().limit(length), offset, name);
        chunk.flip();
        int end = 0;
        while (end + Integer.BYTES <= length) {
            int recordLength = chunk.getInt(end + RecordDescriptor.LENGTH_OFFSET);
            long aligned = RecordDescriptor.aligned(recordLength);
            if (recordLength < RecordDescriptor.HEADER_LENGTH || end + aligned > length) {
                break;
            }
            end += (int) aligned;
        }
        if (end > 0) {
            return chunk.limit(end);
        }
        int first = length < Integer.BYTES ? 0 : chunk.getInt(RecordDescriptor.LENGTH_OFFSET);
        if (first == 0) {
            return null;
        }
        long aligned = RecordDescriptor.aligned(first);
        if (first < RecordDescriptor.HEADER_LENGTH || offset + aligned > size || aligned > Integer.MAX_VALUE) {
            return chunk; // damaged: refused with its LSN by writeReceived
        }
        ByteBuffer large = ByteBuffer.allocateDirect((int) aligned).order(ByteOrder.LITTLE_ENDIAN);
        read(ch, large, offset, name);
        return large.flip();
    }

    private static void read(FileChannel ch, ByteBuffer into, long offset, String name) throws IOException {
        long at = offset;
        while (into.hasRemaining()) {
            int n = ch.read(into, at);
            if (n < 0) {
                throw new IOException("archived " + name + " ended early while being read");
            }
            at += n;
        }
    }
}
