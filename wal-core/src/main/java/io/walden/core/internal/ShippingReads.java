package io.walden.core.internal;

import io.walden.core.IllegalLsnException;
import io.walden.core.Lsn;
import io.walden.core.LsnRemovedException;
import io.walden.core.ReplicationChunk;
import io.walden.core.WalCorruptedException;
import io.walden.core.internal.commit.Position;
import io.walden.core.internal.commit.ReadNotifier;
import io.walden.core.internal.record.RecordCursor;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.segment.SegmentRegistry;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * What replication senders read (ReplicatedLog.readFlushed and readWritten): a chunk of whole records from a proven
 * record boundary, below the shippable end (the flushed or written position, and a replica's read limit), copied out
 * of the segment so that truncation may remove it while the chunk is on its way (docs/replication-protocol.md, Data
 * frames). A chunk never spans segments and holds at least one record when one is shippable. Senders wait here for
 * the shippable end to move ({@link #awaitShippablePast}), or have their loops woken when it moves
 * ({@link #wakeOnPositions}).
 *
 * <p>Thread-safety: any number of senders at once; each read holds its segment against truncation while it copies.
 */
public final class ShippingReads {
    /** The rest of the log: whether it is open, and its oldest record. */
    private final WalReplication.Log log;
    private final SegmentRegistry registry;
    private final Position written;
    private final Position flushed;
    private final Position readLimit;
    private final Position insert;
    private final long segmentSize;
    /** Signalled whenever a position senders wait on moves. */
    private final ReadNotifier notifier;

    ShippingReads(WalReplication.Log log, SegmentRegistry registry, Position written, Position flushed, Position readLimit,
                  Position insert, long segmentSize, ReadNotifier notifier) {
        this.log = log;
        this.registry = registry;
        this.written = written;
        this.flushed = flushed;
        this.readLimit = readLimit;
        this.insert = insert;
        this.segmentSize = segmentSize;
        this.notifier = notifier;
    }

    /** See ReplicatedLog.shippableLsn. */
    public long shippableLsn(boolean unflushed) {
        return Math.min(unflushed ? written.get() : flushed.get(), readLimit.get());
    }

    /** See ReplicatedLog.awaitShippablePast: true once the shippable end passed {@code lsn}; ends when the log closes. */
    boolean awaitShippablePast(long lsn, boolean unflushed, long timeout, TimeUnit unit) throws InterruptedException {
        return notifier.await(() -> shippableLsn(unflushed), lsn, timeout, unit, log::isClosed);
    }

    /** See ReplicatedLog.wakeOnPositions. */
    void wakeOnPositions(Runnable wakeUp) {
        notifier.wakeOnSignal(wakeUp);
    }

    /** See ReplicatedLog.stopWakingOnPositions. */
    void stopWakingOnPositions(Runnable wakeUp) {
        notifier.stopWaking(wakeUp);
    }

    public ReplicationChunk read(long fromLsn, int maxBytes, boolean unflushed) {
        log.ensureOpen();
        long limit = shippableLsn(unflushed);
        if (fromLsn > limit) {
            long end = unflushed ? written.get() : flushed.get();
            throw new IllegalLsnException("LSN " + Lsn.format(fromLsn) + " is beyond the shippable end " + Lsn.format(limit)
                    + (limit < end ? " (the read limit; " : " (") + (unflushed ? "written " : "flushed ") + Lsn.format(end) + ")");
        }
        return readBelow(fromLsn, maxBytes, limit);
    }

    /** See ReplicatedLog.readHeld: up to this log's own flushed end, a replica's read limit notwithstanding. */
    public ReplicationChunk readHeld(long fromLsn, long toLsn, int maxBytes) {
        log.ensureOpen();
        long end = flushed.get();
        if (fromLsn > end) {
            throw new IllegalLsnException("LSN " + Lsn.format(fromLsn) + " is beyond this log's flushed end " + Lsn.format(end));
        }
        return readBelow(fromLsn, maxBytes, Math.min(end, toLsn));
    }

    /** Whole records from {@code fromLsn} (a record boundary at or below {@code limit}) up to {@code limit}. */
    private ReplicationChunk readBelow(long fromLsn, int maxBytes, long limit) {
        long from = fromLsn;
        from = ReadStart.pastHeader(from, segmentSize); // a segment's start: its first record follows the header
        if (from >= limit) {
            return null;
        }
        if (from < log.oldestLsn()) {
            throw new LsnRemovedException(from, log.oldestLsn());
        }
        ReadStart.expectedPrev(registry, from, written.get(), insert.get(), log.oldestLsn()); // refuses a non-boundary
        Segment seg = registry.enter(from);
        if (seg == null) {
            throw new LsnRemovedException(from, log.oldestLsn());
        }
        try {
            long offset = from - seg.startLsn();
            long end = offset;
            long max = Math.min(limit, seg.endLsn()) - seg.startLsn();
            ByteBuffer view = seg.newView();
            RecordCursor records = new RecordCursor().start(view, seg.startLsn(), offset, -1);
            while (end < max) {
                long next = records.at(end).nextPublished();
                if (next < 0 || (next - offset > maxBytes && end > offset)) {
                    break;
                }
                end = next;
            }
            if (end == offset) {
                if (seg.readIntAcquire(offset) != 0) { // a length word no record could have: damage, at a proven boundary
                    throw new WalCorruptedException("record at " + Lsn.format(from) + " in " + seg.path()
                            + " has an impossible length word; it cannot be shipped", from, seg.path());
                }
                throw new IllegalLsnException("no record starts at " + Lsn.format(from) + " (below the shippable end "
                        + Lsn.format(limit) + "): not a record boundary of this log");
            }
            byte[] bytes = new byte[(int) (end - offset)];
            view.position((int) offset).limit((int) end);
            view.get(bytes);
            return new ReplicationChunk(from, ByteBuffer.wrap(bytes).asReadOnlyBuffer(),
                    ReadStart.pastHeader(from + bytes.length, segmentSize));
        } finally {
            seg.exit();
        }
    }
}
