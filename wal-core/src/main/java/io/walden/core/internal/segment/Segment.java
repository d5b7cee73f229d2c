package io.walden.core.internal.segment;

import io.walden.core.internal.sync.ForceTarget;
import net.openhft.chronicle.bytes.MappedBytesStore;
import net.openhft.chronicle.bytes.MappedFile;
import net.openhft.chronicle.core.UnsafeMemory;
import net.openhft.chronicle.core.io.ReferenceOwner;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One segment file, fully allocated on disk and mapped whole with Chronicle Bytes.
 *
 * <p>Offsets passed to the accessors are byte offsets within the file ({@code lsn - startLsn()}). The
 * word accessors go straight to the mapped address through Chronicle's {@code UnsafeMemory}, without the
 * store's per-call state and bounds checks: they are the append path's, whose offsets the reservation
 * has already bounded (asserted when assertions are on), and the lifetime rule below keeps the address valid.
 * Accessors are named by their memory-ordering semantics: a {@code ...Release} store pairs with a
 * {@code ...Acquire} load of the same word (Agrona's rule: unmatched pairs are data races).
 *
 * <p>Lifetime: the {@code Wal} owns one reference. Readers {@link #tryEnter()} before touching the
 * mapping and {@link #exit()} afterwards; {@link #markRemoved()} marks the segment removed, and the mapping
 * is released only when it is removed and no reader is inside (Dekker-style: the reader increments then
 * checks {@code removed}; the remover sets {@code removed} then checks the count; with volatile
 * accesses at least one of them sees the other).
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public final class Segment extends NativeRegion implements ForceTarget {
    private static final ReferenceOwner OWNER = ReferenceOwner.temporary("walden-segment");
    private final Path path;
    private final long startLsn;
    private final FileChannel channel;
    private final MappedFile mappedFile;
    private final MappedBytesStore store;
    /** Readers inside plus one for the owner; 0 means the mapping is released. */
    private final AtomicInteger users = new AtomicInteger(1);
    private volatile boolean removed;
    /** See {@link #dsyncChannel()}. */
    private volatile FileChannel dsyncChannel;
    /** Created on the first boundary check (readers and senders only); see {@link #boundaries()}. */
    private volatile RecordBoundaries boundaries;

    private Segment(Path path, long startLsn, long size, FileChannel channel, MappedFile mappedFile, MappedBytesStore store) {
        super(store, size);
        this.path = path;
        this.startLsn = startLsn;
        this.channel = channel;
        this.mappedFile = mappedFile;
        this.store = store;
    }

    /**
     * Maps an existing, fully allocated segment file read-write.
     *
     * @throws IOException when the file's length is not the segment size (never maps a short file:
     *                     a store past its end would fault inside the JVM)
     */
    public static Segment map(Path path, long startLsn, long size) throws IOException {
        FileChannel channel = UninterruptibleChannels.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
        try {
            long actual = channel.size();
            if (actual != size) {
                throw new IOException("segment " + path + " is " + actual + " bytes long, expected " + size);
            }
            MappedFile mf = MappedFile.ofSingle(path.toFile(), size, false);
            MappedBytesStore store = mf.acquireByteStore(OWNER, 0);
            return new Segment(path, startLsn, size, channel, mf, store);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    public Path path() {
        return path;
    }

    @Override
    public long startLsn() {
        return startLsn;
    }

    public long endLsn() {
        return startLsn + size;
    }

    public boolean contains(long lsn) {
        return lsn >= startLsn && lsn < startLsn + size;
    }

    /**
     * Writes {@code length} bytes with {@code pwrite} on the segment's channel instead of storing them through the
     * mapping. The mapping sees them at once (one page cache), but the pages are dirtied without write faults on
     * the mapping, and on ext4 a later {@code fdatasync} of such pages costs about half as much (measured: ~140 µs
     * against ~280 µs for a small record). For bulk copies that nobody reads while they land (a replica's apply):
     * a small {@code pwrite} is not an atomic store (the kernel may copy it byte by byte), so it can never publish
     * a length word or a prev link that another thread is polling.
     */
    public void writeThroughChannel(long offset, ByteBuffer src, int srcPosition, int length) throws IOException {
        ByteBuffer b = src.duplicate();
        b.limit(srcPosition + length).position(srcPosition);
        long at = offset;
        while (b.hasRemaining()) {
            at += channel.write(b, at);
        }
    }

    /** Which offsets of this segment are record boundaries (proven by walking its records from the first). */
    public RecordBoundaries boundaries() {
        RecordBoundaries b = boundaries;
        if (b == null) {
            synchronized (this) {
                b = boundaries;
                if (b == null) {
                    boundaries = b = new RecordBoundaries(this);
                }
            }
        }
        return b;
    }

    // ---- forcing ----

    /** fdatasync ({@code metadata=false}) or fsync of the whole file. */
    @Override
    public void force(boolean metadata) throws IOException {
        channel.force(metadata);
    }

    /**
     * A channel to this segment's file opened with {@code DSYNC}: a write returns once its data is durable
     * ({@code open_datasync}). Opened on first use, closed with the segment.
     */
    public FileChannel dsyncChannel() throws IOException {
        FileChannel c = dsyncChannel;
        if (c == null) {
            synchronized (this) {
                c = dsyncChannel;
                if (c == null) {
                    dsyncChannel = c = UninterruptibleChannels.open(path, StandardOpenOption.WRITE, StandardOpenOption.DSYNC);
                }
            }
        }
        return c;
    }

    /** Positional read through the file channel, for tools that must not trust the mapping. */
    public FileChannel channel() {
        return channel;
    }

    // ---- lifetime ----

    /** Enters as a reader; false when the segment was removed (truncated or rewound away). */
    public boolean tryEnter() {
        for (int n; (n = users.get()) > 0; ) {
            if (users.compareAndSet(n, n + 1)) {
                if (removed) {
                    exit();
                    return false;
                }
                return true;
            }
        }
        return false; // already released: never take a count from 0, which would unmap twice
    }

    public void exit() {
        if (users.decrementAndGet() == 0) {
            unmap();
        }
    }

    public boolean isRemoved() {
        return removed;
    }

    /** Marks the segment removed and drops the owner's reference; the mapping goes with the last reader. */
    public void markRemoved() {
        if (!removed) {
            removed = true;
            exit();
        }
    }

    /** True once removed and no reader remains inside: the file may be renamed, recycled or deleted. */
    public boolean isReleased() {
        return users.get() == 0;
    }

    private void unmap() {
        try {
            store.release(OWNER);
            mappedFile.releaseLast();
            // The MappedFile keeps its own reference to the store it created and does not drop it when it is
            // released; without this the mapping (and a deleted file's disk space) would live until exit.
            if (store.refCount() > 0) {
                store.releaseLast();
            }
        } finally {
            try {
                channel.close();
                if (dsyncChannel != null) {
                    dsyncChannel.close();
                }
            } catch (IOException ignored) {
                // closing a channel whose writes returned (and were forced, or synchronous) cannot lose data
            }
        }
    }

    @Override
    public String toString() {
        return "Segment{" + path.getFileName() + "}";
    }
}
