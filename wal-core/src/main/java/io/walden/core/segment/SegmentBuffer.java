package io.walden.core.segment;

import net.openhft.chronicle.bytes.BytesStore;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * A WAL buffer (PostgreSQL's wal_buffers): the image of one segment in native memory, with the segment's layout
 * (an offset here is the same offset in the file). Appenders reserve, copy, link and publish records here, never
 * in the file's mapping; the flush leader and the background writer then {@link #writeTo write} completed ranges
 * into the segment file with positional writes, and only bytes already in the file are read through the mapping.
 * Forcing pages dirtied by {@code pwrite} costs about half as much as forcing pages dirtied through a mapping (see
 * docs/group-commit.md), and nothing can read a half-written word of the file: readers stop at the position the
 * file holds.
 *
 * <p>Lifetime: taken from {@link SegmentBuffers} before its segment becomes reachable by appenders, returned to
 * it once the file holds the whole segment, and reused only after a grace period in which every appender-side
 * thread has left the log (a thread may still hold a position in the segment it last scanned).
 */
public final class SegmentBuffer extends NativeRegion {
    private final BytesStore<?, Void> store;
    /** The writer's own view (one writer at a time: the holder of the write lock), so that a write allocates nothing. */
    private final ByteBuffer writerView;

    private SegmentBuffer(BytesStore<?, Void> store, long size) {
        super(store, size);
        this.store = store;
        this.writerView = newView();
    }

    /** Native memory of {@code size} bytes, zeroed. */
    static SegmentBuffer allocate(long size) {
        BytesStore<?, Void> store = BytesStore.nativeStoreWithFixedCapacity(size);
        store.zeroOut(0, size);
        return new SegmentBuffer(store, size);
    }

    /**
     * Writes bytes {@code [from, to)} into {@code file} at the same offsets ({@code pwrite}), whole: a short write
     * is continued. One caller at a time (the holder of the write lock).
     */
    public void writeTo(FileChannel file, long from, long to) throws IOException {
        ByteBuffer b = writerView;
        b.limit((int) to).position((int) from);
        while (b.hasRemaining()) {
            file.write(b, b.position());
        }
    }

    void free() {
        store.releaseLast();
    }

    @Override
    public String toString() {
        return "SegmentBuffer{" + size + " bytes}";
    }
}
