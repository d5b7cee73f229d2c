package io.walden.core.internal.segment;

import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.core.UnsafeMemory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A fixed block of native memory addressed by byte offset: a segment file's mapping ({@link Segment}, offsets
 * within the segment) or the WAL buffers ({@code io.walden.core.internal.commit.WalBuffers}, offsets within the ring). The word accessors go straight to the address
 * through Chronicle's {@code UnsafeMemory}, without the store's per-call state and bounds checks: they are the
 * append path's, whose offsets the reservation has already bounded (asserted when assertions are on).
 * Accessors are named by their memory-ordering semantics: a {@code ...Release} store pairs with a
 * {@code ...Acquire} load of the same word (Agrona's rule: unmatched pairs are data races).
 *
 * <p>Thread-safety: every method may be called from any thread; the owner keeps the memory alive while it is used.
 */
public abstract class NativeRegion {
    public final long size;
    private final BytesStore<?, ?> store;
    private final ByteBuffer view;
    public final long address;

    protected NativeRegion(BytesStore<?, ?> store, long size) {
        this.store = store;
        this.size = size;
        this.view = store.toTemporaryDirectByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        this.address = store.addressForRead(0);
    }

    /** A region of {@code size} bytes with no memory behind it (a segment known but not mapped): no accessor may run. */
    protected NativeRegion(long size) {
        this.store = null;
        this.size = size;
        this.view = null;
        this.address = 0;
    }

    public long size() {
        return size;
    }

    private static final UnsafeMemory MEMORY = UnsafeMemory.MEMORY;
    private static final long BYTE_ARRAY_BASE = UnsafeMemory.UNSAFE.arrayBaseOffset(byte[].class);

    private long at(long offset, int width) {
        assert offset >= 0 && offset + width <= size : "offset " + offset + " outside " + this;
        return address + offset;
    }

    public int readIntAcquire(long offset) {
        return MEMORY.readVolatileInt(at(offset, Integer.BYTES));
    }

    /** Publishes a record's length word: every earlier store of this thread becomes visible first. */
    public void writeIntRelease(long offset, int value) {
        MEMORY.writeOrderedInt(at(offset, Integer.BYTES), value);
    }

    public int readInt(long offset) {
        return MEMORY.readInt(at(offset, Integer.BYTES));
    }

    public void writeInt(long offset, int value) {
        MEMORY.writeInt(at(offset, Integer.BYTES), value);
    }

    public long readLong(long offset) {
        return MEMORY.readLong(at(offset, Long.BYTES));
    }

    public long readLongAcquire(long offset) {
        return MEMORY.readVolatileLong(at(offset, Long.BYTES));
    }

    public void writeLong(long offset, long value) {
        MEMORY.writeLong(at(offset, Long.BYTES), value);
    }

    public void writeLongRelease(long offset, long value) {
        MEMORY.writeOrderedLong(at(offset, Long.BYTES), value);
    }

    public void writeShort(long offset, short value) {
        MEMORY.writeShort(at(offset, Short.BYTES), value);
    }

    public short readShort(long offset) {
        return MEMORY.readShort(at(offset, Short.BYTES));
    }

    public void write(long offset, byte[] src, int srcOffset, int length) {
        // Unsafe.copyMemory is the JVM's intrinsic bulk copy; Chronicle's byte[] overload loops in Java.
        UnsafeMemory.UNSAFE.copyMemory(src, BYTE_ARRAY_BASE + srcOffset, null, at(offset, length), length);
    }

    /** Copies {@code length} bytes of {@code src} from index {@code srcPosition} (its position is not moved). */
    public void write(long offset, ByteBuffer src, int srcPosition, int length) {
        if (src.hasArray()) {
            // Through the array, honouring arrayOffset(): a slice of a heap buffer starts inside its array.
            UnsafeMemory.UNSAFE.copyMemory(src.array(), BYTE_ARRAY_BASE + src.arrayOffset() + srcPosition, null,
                    at(offset, length), length);
        } else if (src.isDirect()) {
            store.write(offset, src, srcPosition, length);
        } else {
            newView().put((int) offset, src, srcPosition, length); // a read-only heap buffer: no array to copy from
        }
    }

    public void write(long offset, BytesStore<?, ?> src, long srcOffset, long length) {
        store.write(offset, src, srcOffset, length);
    }

    public void zero(long from, long to) {
        if (to > from) {
            store.zeroOut(from, to);
        }
    }

    /** A fresh little-endian view of the whole region; its position and limit are the caller's to move. */
    public ByteBuffer newView() {
        return view.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    }
}
