package io.walden.core.internal.segment;

import io.walden.core.internal.sync.ForceTarget;
import net.openhft.chronicle.bytes.MappedBytesStore;
import net.openhft.chronicle.bytes.MappedFile;
import net.openhft.chronicle.core.UnsafeMemory;
import net.openhft.chronicle.core.io.ReferenceOwner;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

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
 * <p>Parking: a segment nobody is inside may give back its mapping and its descriptors ({@link #park()}) and stay
 * known to its log by name and range; {@link SegmentRegistry#enter} maps the file again, as a new {@code Segment},
 * when a reader needs it. A segment may also be known without ever having been mapped ({@link #unmapped}: a log's
 * old segments at open). Only segments that no thread touches without entering are parked: those wholly below the
 * log's written and flushed positions ({@link OpenSegments}), whose bytes the log's flushes never touch again.
 * Issue #36: a store of many logs, or a log of many segments, must not hold a mapping and two descriptors for each
 * of its segment files (Redpanda and Kafka hit that wall on descriptors and on {@code vm.max_map_count}).
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public final class Segment extends NativeRegion implements ForceTarget {
    private static final ReferenceOwner OWNER = ReferenceOwner.temporary("walden-segment");
    private final Path path;
    private final long startLsn;
    /** Null for a segment known but never mapped ({@link #unmapped}). */
    private final FileChannel channel;
    private final MappedFile mappedFile;
    private final MappedBytesStore store;
    /** Readers inside plus one for the owner; 0 means the mapping is released (removed, or parked). */
    private final AtomicInteger users;
    private volatile boolean removed;
    /** The mapping went back while the segment stays in the log (see the class comment); guarded by this object. */
    private volatile boolean parked;
    /**
     * Set at every entry, cleared by {@link OpenSegments}' sweep: the second chance of its clock algorithm (a segment
     * entered since the last sweep stays open). A plain field: a lost update only moves one choice of the sweep.
     */
    boolean referenced;
    /** The store's count of mappings this one is counted in; guarded by this object. */
    private AtomicInteger countedIn;
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
        this.users = new AtomicInteger(1);
    }

    /**
     * Counts this segment's mapping in {@code count} (its store's, see {@link OpenSegments}) until it goes; once only,
     * and not at all when it went already. Under this object's monitor, as the release: counted and released, or
     * neither.
     */
    synchronized void countIn(AtomicInteger count) {
        if (countedIn == null && users.get() > 0) {
            countedIn = count;
            count.incrementAndGet();
        }
    }

    /**
     * Whether the segment was removed, once any park or removal in progress is done (they run under this object's
     * monitor): what a reader whose {@link #tryEnter} failed asks, then {@link #isParked()}.
     */
    synchronized boolean isRemovedOnceSettled() {
        return removed;
    }

    private Segment(Path path, long startLsn, long size) {
        super(size);
        this.path = path;
        this.startLsn = startLsn;
        this.channel = null;
        this.mappedFile = null;
        this.store = null;
        this.users = new AtomicInteger(0);
        this.parked = true;
    }

    /**
     * A segment file the log knows by name and range without mapping it (parked from the start): {@link
     * SegmentRegistry#enter} maps it when a reader first needs it. For a log's old segments at open, which recovery
     * does not scan.
     */
    public static Segment unmapped(Path path, long startLsn, long size) {
        return new Segment(path, startLsn, size);
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

    /**
     * fdatasync ({@code metadata=false}) or fsync of the whole file.
     *
     * @throws ClosedChannelException when the segment was removed or parked (as for any closed channel: whoever may
     *                                meet one, such as the store journal's checkpoint, forces the file by its path)
     */
    @Override
    public void force(boolean metadata) throws IOException {
        if (channel == null) {
            throw new ClosedChannelException();
        }
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

    /**
     * Enters as a reader; false when the segment was removed (truncated or rewound away) or parked. Readers enter
     * through {@link SegmentRegistry#enter}, which maps a parked segment again.
     */
    public boolean tryEnter() {
        for (int n; (n = users.get()) > 0; ) {
            if (users.compareAndSet(n, n + 1)) {
                if (removed) {
                    exit();
                    return false;
                }
                referenced = true;
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
        synchronized (this) {
            if (removed) {
                return;
            }
            removed = true;
            if (parked) {
                return; // the owner's reference went with the mapping
            }
        }
        exit();
    }

    /** True once removed (or parked) and no reader remains inside: the file may be renamed, recycled or deleted. */
    public boolean isReleased() {
        return users.get() == 0;
    }

    /** Whether the mapping went back while the segment stays in its log (see the class comment). */
    public boolean isParked() {
        return parked;
    }

    /** Whether the segment holds a mapping and its descriptors: neither removed and released, nor parked. */
    public boolean isOpen() {
        return users.get() > 0;
    }

    /**
     * Gives back the mapping and the descriptors if nobody is inside (the owner's reference is the only one), the
     * segment is not removed, and it lies wholly below {@code parkableBelow} (the log's flushed position: no thread
     * touches the segment without entering it). Nothing is forced: the log's flushes made its bytes durable before it could be parked (or
     * the store journal did, whose checkpoint forces the file by its path), and an unmapped file's dirty pages stay in
     * the page cache.
     *
     * @return whether it was parked
     */
    boolean park(LongSupplier parkableBelow) {
        synchronized (this) {
            if (removed || parked || !users.compareAndSet(1, 0)) {
                return false;
            }
            // Read after the count went to 0: whoever entered it before (a replica's rewind, which moves the log's end
            // back into it) left it, its changes of the positions visible through the count, and nobody enters now.
            if (endLsn() > parkableBelow.getAsLong()) {
                users.set(1);
                return false;
            }
            parked = true;
        }
        unmap();
        return true;
    }

    private void unmap() {
        synchronized (this) {
            if (countedIn != null) {
                countedIn.decrementAndGet();
            }
        }
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
