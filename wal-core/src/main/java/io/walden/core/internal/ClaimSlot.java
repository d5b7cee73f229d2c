package io.walden.core.internal;

import io.walden.core.Durability;
import io.walden.core.internal.commit.Activity;
import io.walden.core.internal.commit.WalBuffers;
import io.walden.core.internal.record.RecordDescriptor;

/**
 * The state of one zero-copy claim ({@link io.walden.core.WalClaim}, which owns one and shows its bytes): which record
 * it reserved, in which WAL buffers, and the thread and log activity that must finish it. {@link WritePath#claim}
 * fills it; {@link #finish} publishes (or pads) the record and leaves the activity.
 *
 * <p>Thread-safety: NOT thread-safe, as its claim: the thread that claims finishes.
 */
public final class ClaimSlot {
    private WritePath wal;
    private WalBuffers ring;
    private Activity.Cell activity;
    private Thread owner;
    private long lsn;
    private int length;

    void open(WritePath wal, WalBuffers ring, long lsn, int payloadLength, Activity.Cell activity) {
        this.activity = activity;
        this.owner = Thread.currentThread();
        this.ring = ring;
        this.wal = wal;
        this.lsn = lsn;
        this.length = payloadLength;
    }

    /** True between a successful claim and its finish. */
    public boolean isActive() {
        return wal != null;
    }

    /** The WAL buffers the claimed payload lies in (one contiguous block: see WalBuffers). */
    public WalBuffers ring() {
        return ring;
    }

    /** Where the claimed payload starts in {@link #ring()}'s buffer. */
    public int payloadOffset() {
        return (int) ring.offset(lsn) + RecordDescriptor.TIMED_HEADER_LENGTH;
    }

    public long lsn() {
        return lsn;
    }

    public int length() {
        return length;
    }

    /** The log's default durability (a commit that names none). */
    public Durability defaultDurability() {
        return wal.config().durability();
    }

    /** The thread that claimed: only it may finish. */
    public Thread owner() {
        return owner;
    }

    /**
     * Publishes the record ({@code flags} 0), or turns it into padding, waits for {@code durability}; ends the claim.
     * A null {@code durability}: no wait at all, the caller makes the record durable itself (see WritePath.finishClaim).
     */
    public void finish(int flags, Durability durability) {
        WritePath w = wal;
        wal = null;
        w.finishClaim(lsn, RecordDescriptor.recordLength(length), flags, durability, activity);
    }
}
