package io.walden.core.internal;

import io.walden.core.IllegalLsnException;
import io.walden.core.Lsn;
import io.walden.core.LsnRemovedException;
import io.walden.core.WalReader;
import io.walden.core.internal.commit.ReadNotifier;
import io.walden.core.internal.record.ZstdDictionary;
import io.walden.core.internal.segment.Segment;

import java.nio.ByteBuffer;

/**
 * How readers reach the log, and all a {@link WalReader} sees of it: where a read may start (a proven record
 * boundary, ReadStart), how far it may see (written or flushed, and a replica's read limit), the segments it
 * maps, and the notifier it waits on. Readers never hold the {@link Wal} facade.
 *
 * <p>Thread-safety: every method from any thread.
 */
public final class ReadPath {
    private final WalParts parts;
    private final SegmentDictionaries dictionaries = new SegmentDictionaries();

    public ReadPath(WalParts parts) {
        this.parts = parts;
    }

    /** See {@link Wal#reader(long, WalReader.Visibility)}. */
    public LogReader reader(long fromLsn, WalReader.Visibility visibility) {
        parts.writes.ensureOpen();
        long oldest = parts.oldestLsn();
        Segment first = parts.registry.oldest();
        if (first != null && fromLsn >= first.startLsn() && fromLsn < oldest) {
            fromLsn = oldest; // inside the oldest segment's header: the log starts right after it
        }
        if (fromLsn < oldest) {
            throw new LsnRemovedException(fromLsn, oldest);
        }
        long insert = parts.insert.get();
        if (fromLsn > insert) {
            throw new IllegalLsnException("LSN " + Lsn.format(fromLsn) + " is beyond the end of the log ("
                    + Lsn.format(insert) + ")");
        }
        long from = ReadStart.pastHeader(fromLsn, parts.config.segmentSize());
        long expectedPrev = ReadStart.expectedPrev(parts.registry, from, parts.written.get(), insert, oldest);
        return new LogReader(this, from, expectedPrev, visibility);
    }

    /** The log's own reader of control records from {@code from} to {@code until}, past a replica's read limit. */
    public LogReader controlScanner(long from, long until, LogReader.ControlSink sink) {
        parts.writes.ensureOpen();
        long oldest = parts.oldestLsn();
        long insert = parts.insert.get();
        long start = ReadStart.pastHeader(Math.min(Math.max(from, oldest), insert), parts.config.segmentSize());
        long expectedPrev = start >= insert ? ReadStart.ANY_PREV
                : ReadStart.expectedPrev(parts.registry, start, parts.written.get(), insert, oldest);
        return new LogReader(this, start, expectedPrev, WalReader.Visibility.WRITTEN, until, sink);
    }

    /** For a reader that started beyond the written position: proves its start once it is written (see ReadStart). */
    public long expectedPrevAt(long lsn) {
        return ReadStart.expectedPrev(parts.registry, lsn, parts.written.get(), parts.insert.get(), parts.oldestLsn());
    }

    /**
     * What readers at {@code visibility} may see now: below the written or flushed position, and, on a replica, below
     * what its primary has flushed (the read limit).
     */
    public long visibleLsn(WalReader.Visibility visibility) {
        long end = visibility == WalReader.Visibility.WRITTEN ? parts.written.get() : parts.flushed.get();
        return Math.min(end, parts.readLimit.get());
    }

    public long writtenLsn() {
        return parts.written.get();
    }

    public long oldestLsn() {
        return parts.oldestLsn();
    }

    /**
     * Enters the segment holding {@code lsn} as a reader (mapped again if it was parked); null when it was removed. The
     * caller exits it.
     */
    public Segment enterSegment(long lsn) {
        return parts.registry.enter(lsn);
    }

    public ReadNotifier notifier() {
        return parts.notifier;
    }

    public boolean isClosed() {
        return parts.writes.isClosed();
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
        return parts.config.maxPayloadSize();
    }
}
