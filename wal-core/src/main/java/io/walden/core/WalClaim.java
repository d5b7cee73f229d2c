package io.walden.core;

import io.walden.core.internal.ClaimSlot;
import io.walden.core.internal.commit.WalBuffers;
import io.walden.core.internal.record.RecordDescriptor;

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
    private final ClaimSlot slot = new ClaimSlot();
    private WalBuffers viewRing;
    private ByteBuffer view;

    public WalClaim() {
    }

    /** The state the log fills when it reserves this claim's record ({@link Wal#claim}). */
    ClaimSlot slot() {
        return slot;
    }

    /** The log reserved the record: the payload's window into the WAL buffers (one contiguous block: see WalBuffers). */
    void opened() {
        WalBuffers ring = slot.ring();
        if (ring != viewRing) {
            viewRing = ring;
            view = ring.newView();
        }
        int start = slot.payloadOffset();
        view.limit(start + slot.length()).position(start);
    }

    /** True between a successful {@link Wal#claim} and its commit or abort. */
    public boolean isActive() {
        return slot.isActive();
    }

    /**
     * The claimed payload bytes, little-endian: from {@code position()} (inclusive) to {@code limit()}.
     * Write with relative puts, or absolute puts at {@code position() + i}. The bytes start zeroed.
     */
    public ByteBuffer buffer() {
        if (!slot.isActive()) {
            throw new IllegalStateException("no active claim");
        }
        return view;
    }

    public long lsn() {
        return slot.lsn();
    }

    public int length() {
        return slot.length();
    }

    /** Publishes the record and waits for the log's default durability; returns its LSN. */
    public long commit() {
        ensureActive();
        return commit(slot.defaultDurability());
    }

    /** Publishes the record and waits for {@code durability}; returns its LSN. */
    public long commit(Durability durability) {
        ensureActive();
        long lsn = slot.lsn();
        slot.finish(0, durability);
        return lsn;
    }

    /** Turns the claimed space into padding that readers skip; the log moves on. */
    public void abort() {
        ensureActive();
        slot.finish(RecordDescriptor.FLAG_PADDING, Durability.OFF);
    }

    private void ensureActive() {
        if (!slot.isActive()) {
            throw new IllegalStateException("no active claim: call Wal.claim first (a claim is committed or aborted once)");
        }
        if (Thread.currentThread() != slot.owner()) {
            throw new IllegalStateException("a claim is committed or aborted by the thread that made it");
        }
    }
}
