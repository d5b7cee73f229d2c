package io.walden.core.internal.commit;

import io.walden.core.internal.segment.NativeRegion;
import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.core.OS;
import net.openhft.posix.MAdviseFlag;
import net.openhft.posix.PosixAPI;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * The WAL buffers (PostgreSQL's {@code wal_buffers}): one ring of native memory that appenders reserve, copy, link
 * and publish records into, and that the {@link LogWriter} writes into the segment files with positional writes.
 * The format of this memory is the files' own (docs/format.md); only where it lives differs.
 *
 * <pre>
 *   ring offset 0                                   capacity            capacity + slack
 *   |------------------------------------------------|-------------------|
 *   | the record starting at LSN L lives at L mod capacity, contiguously | spill of the one record
 *   |                                                 | that crosses the end of the ring
 * </pre>
 *
 * <p><b>Addressing.</b> A record (or a claim's window) starting at LSN {@code L} occupies the contiguous memory
 * {@code [L mod capacity, L mod capacity + aligned length)}; a record that starts before the ring's end runs on into
 * the slack, so no record is ever split and a claim is one {@link ByteBuffer} window. The LSNs the spilled bytes
 * belong to map to the start of the ring, which stays unused in that lap; the spill end tells the writer where the
 * ring's start is used again. When the ring is at least a segment long, every lap ends at a segment's end, which no
 * record crosses, and there is no slack.
 *
 * <p><b>Admission.</b> Bytes for LSNs {@code [a, b)} may be stored only once the written position has passed
 * {@code b - capacity}: then the old lap's bytes in that memory are in the files, and the writer has zeroed them.
 * So the ring holds at most {@code capacity} bytes not yet written (an appender that finds it full writes the
 * oldest itself, as PostgreSQL's {@code AdvanceXLInsertBuffer} does), and memory is bounded whatever the disk does.
 *
 * <p><b>Invariant</b> (what {@code 0} means in a length word or a prev link): every byte of the ring is zero unless
 * it holds a record, or a record's prev link written ahead, at or beyond the written position. The writer zeroes
 * what it wrote before it moves the written position.
 *
 * <p>Thread-safety: the word accessors may be called from any thread on admitted memory; {@link #writeTo} by the
 * holder of the write lock only. Freed once, at close, when no thread is inside the log.
 */
public final class WalBuffers extends NativeRegion {
    /** Smallest ring accepted. */
    public static final long MIN_CAPACITY = 64L << 10;
    /** Largest ring accepted (a ring is one {@link ByteBuffer}-addressable block). */
    public static final long MAX_CAPACITY = 1L << 30;

    private final BytesStore<?, Void> store;
    private final long capacity;
    private final long mask;
    /** The writer's own view (one writer at a time: the holder of the write lock), so that a write allocates nothing. */
    private final ByteBuffer writerView;
    /**
     * The end of the record that runs past the ring's end in the current lap (ring offsets past the end are in the
     * slack). Written by that record's reserver after its admission and before it publishes; read by the writer,
     * which writes only published bytes (so it sees the store through the length word's release/acquire pair). A
     * crossing of the next lap's end is admitted only once the written position passed this one's, so one field
     * suffices. Values not above the crossing being written are stale: no record spills there.
     */
    private volatile long spillEnd;

    private WalBuffers(BytesStore<?, Void> store, long capacity, long slack) {
        super(store, capacity + slack);
        this.store = store;
        this.capacity = capacity;
        this.mask = capacity - 1;
        this.writerView = newView();
    }

    /**
     * Allocates and zeroes the ring.
     *
     * @param capacity    a power of two from {@link #MIN_CAPACITY} to {@link #MAX_CAPACITY}
     * @param segmentSize the log's segment size; when the ring is at least that large every lap ends at a segment's
     *                    end, no record ever crosses it, and no slack is needed
     * @param maxRecord   the largest record's aligned length
     */
    public static WalBuffers allocate(long capacity, long segmentSize, long maxRecord) {
        if (Long.bitCount(capacity) != 1 || capacity < MIN_CAPACITY || capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException("WAL buffers must be a power of two from " + MIN_CAPACITY + " to "
                    + MAX_CAPACITY + " bytes, got " + capacity);
        }
        long slack = bytesFor(capacity, segmentSize, maxRecord) - capacity;
        BytesStore<?, Void> store = BytesStore.nativeStoreWithFixedCapacity(capacity + slack);
        WalBuffers ring = new WalBuffers(store, capacity, slack);
        ring.zeroUntouched();
        return ring;
    }

    /** The memory a ring of {@code capacity} takes: the capacity, and the slack it needs (see {@link #allocate}). */
    public static long bytesFor(long capacity, long segmentSize, long maxRecord) {
        return capacity >= segmentSize ? capacity : capacity + maxRecord;
    }

    /**
     * Zeroes the whole ring without touching it: its whole pages are given back ({@link #releasePages}), which makes
     * them read as zeros and take no memory until an append touches them, and only the partial pages at its two ends
     * are written. A log that never appends (most of a large store's) costs no memory for its ring. Where pages cannot
     * be given back, every byte is written.
     */
    private void zeroUntouched() {
        if (!releasePages()) {
            zero(0, size);
            return;
        }
        long page = OS.pageSize();
        long firstWhole = ((address + page - 1) & -page) - address;
        long lastWhole = ((address + size) & -page) - address;
        zero(0, Math.min(firstWhole, size));
        zero(Math.max(lastWhole, 0), size);
    }

    /** The ring's size: at most this many bytes are in the WAL buffers and not yet in the files. */
    public long capacity() {
        return capacity;
    }

    /** Where the record starting at {@code lsn} lives. */
    public long offset(long lsn) {
        return lsn & mask;
    }

    /** Whether bytes up to {@code end} may be stored, the files holding everything below {@code writtenLsn}. */
    public boolean admits(long end, long writtenLsn) {
        return end - capacity <= writtenLsn;
    }

    /** Records that the record (or closing header) occupying {@code [lsn, end)} runs past the ring's end, if it does. */
    public void noteSpill(long lsn, long end) {
        if (((lsn ^ (end - 1)) & ~mask) != 0) {
            spillEnd = end;
        }
    }

    /**
     * Where the ring's start is used again after the lap ending at {@code lapEnd} (a multiple of the capacity): the
     * end of the record that ran past it, or {@code lapEnd} itself when none did.
     */
    public long spillEnd(long lapEnd) {
        long e = spillEnd;
        return e > lapEnd && e - lapEnd < capacity ? e : lapEnd;
    }

    /** The next lap end after {@code lsn}. */
    public long lapEndAfter(long lsn) {
        return (lsn | mask) + 1;
    }

    /**
     * Writes {@code length} bytes of the ring from {@code ringOffset} into {@code file} at {@code fileOffset}
     * ({@code pwrite}), whole: a short write is continued. Holder of the write lock only.
     */
    public void writeTo(FileChannel file, long fileOffset, long ringOffset, long length) throws IOException {
        ByteBuffer b = writerView;
        b.limit((int) (ringOffset + length)).position((int) ringOffset);
        long at = fileOffset;
        while (b.hasRemaining()) {
            at += file.write(b, at);
        }
    }

    /**
     * Returns the ring's whole pages to the operating system ({@code madvise(MADV_DONTNEED)}: this private memory
     * reads as zeros afterwards and takes memory again only where it is touched). Only while nobody reads or writes
     * the ring and its bytes are zero but those the caller keeps and puts back (IdleRing).
     *
     * @return whether the pages went back (false where the platform cannot: the memory then stays as it was)
     */
    public boolean releasePages() {
        long page = OS.pageSize();
        long from = (address + page - 1) & -page;
        long to = (address + size) & -page;
        return to > from && PosixAPI.posix().madvise(from, to - from, MAdviseFlag.MADV_DONTNEED) == 0;
    }

    /** Frees the memory: only once no thread is inside the log. */
    public void free() {
        store.releaseLast();
    }

    @Override
    public String toString() {
        return "WalBuffers{" + capacity + " bytes + " + (size() - capacity) + " slack}";
    }
}
