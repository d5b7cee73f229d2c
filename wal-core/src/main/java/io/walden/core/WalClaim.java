package io.walden.core;

import io.walden.core.commit.Activity;
import io.walden.core.commit.WalBuffers;
import io.walden.core.record.RecordDescriptor;

import java.nio.ByteBuffer;

/**
 * A zero-copy append in the style of Aeron's {@code tryClaim}/{@code BufferClaim}: {@link Wal#claim}
 * reserves a record of a fixed length, the caller writes its payload straight into the log's WAL buffers
 * through {@link #buffer()}, then {@link #commit()}s it (or {@link #abort()}s it, leaving padding that
 * readers skip).
 *
 * <p>Reuse one instance per thread: claiming, writing and committing allocate nothing. Until it is
 * committed or aborted, a claim holds up the written position of every later record, so keep the time
 * between claim and commit short, and always commit or abort (try/finally). In particular, do not append
 * (from this thread, or from one this thread waits for) while holding a claim: once the WAL buffers have
 * filled up to the claim, such an append waits for room that only the claim's commit can make.
 *
 * <p>Thread-safety: NOT thread-safe. The thread that claims must also commit or abort (the claim holds that
 * thread's place in the log's activity, which close() waits for).
 */
public final class WalClaim {
    private WritePath wal;
    private WalBuffers viewRing;
    private ByteBuffer view;
    private Activity.Cell activity;
    private Thread owner;
    private long lsn;
    private int length;

    public WalClaim() {
    }

    void open(WritePath wal, WalBuffers ring, long lsn, int payloadLength, Activity.Cell activity) {
        this.activity = activity;
        this.owner = Thread.currentThread();
        if (ring != viewRing) { // the claim is a window into the WAL buffers (one contiguous block: see WalBuffers)
            viewRing = ring;
            view = ring.newView();
        }
        this.wal = wal;
        this.lsn = lsn;
        this.length = payloadLength;
        int start = (int) ring.offset(lsn) + RecordDescriptor.HEADER_LENGTH;
        this.view.limit(start + payloadLength).position(start);
    }

    /** True between a successful {@link Wal#claim} and its commit or abort. */
    public boolean isActive() {
        return wal != null;
    }

    /**
     * The claimed payload bytes, little-endian: from {@code position()} (inclusive) to {@code limit()}.
     * Write with relative puts, or absolute puts at {@code position() + i}. The bytes start zeroed.
     */
    public ByteBuffer buffer() {
        if (wal == null) {
            throw new IllegalStateException("no active claim");
        }
        return view;
    }

    public long lsn() {
        return lsn;
    }

    public int length() {
        return length;
    }

    /** Publishes the record and waits for the log's default durability; returns its LSN. */
    public long commit() {
        ensureActive();
        return commit(wal.config().durability());
    }

    /** Publishes the record and waits for {@code durability}; returns its LSN. */
    public long commit(Durability durability) {
        ensureActive();
        finish(0, durability);
        return lsn;
    }

    /** Turns the claimed space into padding that readers skip; the log moves on. */
    public void abort() {
        ensureActive();
        finish(RecordDescriptor.FLAG_PADDING, Durability.OFF);
    }

    private void finish(int flags, Durability durability) {
        WritePath w = wal;
        wal = null;
        w.finishClaim(lsn, RecordDescriptor.HEADER_LENGTH + length, flags, durability, activity);
    }

    private void ensureActive() {
        if (wal == null) {
            throw new IllegalStateException("no active claim: call Wal.claim first (a claim is committed or aborted once)");
        }
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("a claim is committed or aborted by the thread that made it");
        }
    }
}
