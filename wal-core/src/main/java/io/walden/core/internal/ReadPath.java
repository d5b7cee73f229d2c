package io.walden.core.internal;

import io.walden.core.IllegalLsnException;
import io.walden.core.Lsn;
import io.walden.core.LsnRemovedException;
import io.walden.core.WalReader;
import io.walden.core.internal.commit.ReadNotifier;
import io.walden.core.WalConfig;
import io.walden.core.internal.record.ZstdDictionary;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.segment.SegmentRegistry;

import java.nio.ByteBuffer;

/**
 * How readers reach the log, and all a {@link WalReader} sees of it: where a read may start (a proven record
 * boundary, ReadStart), how far it may see (written or flushed, and a replica's read limit), the segments it
 * maps, and the notifier it waits on. Readers never hold the {@link Wal} facade.
 *
 * <p>Thread-safety: every method from any thread.
 */
public final class ReadPath {
    /** Whether the log is open: a reader of a closed log is refused. */
    private final WritePath writes;
    private final LogPositions positions;
    /** The segments readers enter (and map again when they were parked). */
    private final SegmentRegistry registry;
    private final ReadNotifier notifier;
    private final long segmentSize;
    private final int maxPayloadSize;
    private final SegmentDictionaries dictionaries = new SegmentDictionaries();

    ReadPath(WritePath writes, LogPositions positions, SegmentRegistry registry, ReadNotifier notifier, WalConfig config) {
        this.writes = writes;
        this.positions = positions;
        this.registry = registry;
        this.notifier = notifier;
        this.segmentSize = config.segmentSize();
        this.maxPayloadSize = config.maxPayloadSize();
    }

    /** See {@link Wal#reader(long, WalReader.Visibility)}. */
    public LogReader reader(long fromLsn, WalReader.Visibility visibility) {
        writes.ensureOpen();
        long oldest = positions.oldestLsn();
        Segment first = registry.oldest();
        if (first != null && fromLsn >= first.startLsn() && fromLsn < oldest) {
            fromLsn = oldest; // inside the oldest segment's header: the log starts right after it
        }
        if (fromLsn < oldest) {
            throw new LsnRemovedException(fromLsn, oldest);
        }
        long insert = positions.insertLsn();
        if (fromLsn > insert) {
            throw new IllegalLsnException("LSN " + Lsn.format(fromLsn) + " is beyond the end of the log ("
                    + Lsn.format(insert) + ")");
        }
        long from = ReadStart.pastHeader(fromLsn, segmentSize);
        long expectedPrev = ReadStart.expectedPrev(registry, from, positions.writtenLsn(), insert, oldest);
        return new LogReader(this, from, expectedPrev, visibility);
    }

    /** The log's own reader of control records from {@code from} to {@code until}, past a replica's read limit. */
    public LogReader controlScanner(long from, long until, LogReader.ControlSink sink) {
        writes.ensureOpen();
        long oldest = positions.oldestLsn();
        long insert = positions.insertLsn();
        long start = ReadStart.pastHeader(Math.min(Math.max(from, oldest), insert), segmentSize);
        long expectedPrev = start >= insert ? ReadStart.ANY_PREV
                : ReadStart.expectedPrev(registry, start, positions.writtenLsn(), insert, oldest);
        return new LogReader(this, start, expectedPrev, WalReader.Visibility.WRITTEN, until, sink);
    }

    /** For a reader that started beyond the written position: proves its start once it is written (see ReadStart). */
    public long expectedPrevAt(long lsn) {
        return ReadStart.expectedPrev(registry, lsn, positions.writtenLsn(), positions.insertLsn(), positions.oldestLsn());
    }

    /** What readers at {@code visibility} may see now (see {@link LogPositions#visibleLsn}). */
    public long visibleLsn(WalReader.Visibility visibility) {
        return positions.visibleLsn(visibility);
    }

    public long writtenLsn() {
        return positions.writtenLsn();
    }

    public long oldestLsn() {
        return positions.oldestLsn();
    }

    /**
     * Enters the segment holding {@code lsn} as a reader (mapped again if it was parked); null when it was removed. The
     * caller exits it.
     */
    public Segment enterSegment(long lsn) {
        return registry.enter(lsn);
    }

    public ReadNotifier notifier() {
        return notifier;
    }

    public boolean isClosed() {
        return writes.isClosed();
    }

    /** The zstd dictionary {@code id} for a record at {@code before} in {@code segment} (see SegmentDictionaries). */
    public ZstdDictionary dictionary(long id, Segment segment, ByteBuffer view, long before) {
        return dictionaries.find(id, view, segment.startLsn(), before);
    }

    /** The log was rewound to {@code lsn} (a replica, or a fenced primary turned replica). */
    public void rewound(long lsn) {
        dictionaries.forgetFrom(lsn);
    }

    public int maxPayloadSize() {
        return maxPayloadSize;
    }
}
