package io.walden.core.internal;

import io.walden.core.Lsn;
import io.walden.core.LsnRemovedException;
import io.walden.core.WalClosedException;
import io.walden.core.WalCorruptedException;
import io.walden.core.WalException;
import io.walden.core.WalReader.Visibility;
import io.walden.core.WalRecord;
import io.walden.core.internal.record.DictionaryLookup;
import io.walden.core.internal.record.PayloadDecompressor;
import io.walden.core.internal.record.RecordCheck;
import io.walden.core.internal.record.RecordCursor;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;

/**
 * The reading behind {@link io.walden.core.WalReader} (the application's readers) and the log's own scans of its
 * control records: records in LSN order from a proven record boundary, concurrently with appenders and other readers.
 *
 * <p>Every record is validated (length, prev link, CRC-32C) before it is returned, so a reader never hands out corrupt
 * bytes. A reader holds the segment it is positioned in, so truncation cannot unmap it underneath; reading below the
 * oldest LSN throws {@link LsnRemovedException}.
 *
 * <p>Thread-safety: used by one thread at a time.
 */
public final class LogReader implements AutoCloseable {

    private final ReadPath log;
    private final Visibility visibility;
    private final RecordCursor cursor = new RecordCursor();
    private long position;
    /** The prev link the next record must carry; ANY_PREV only before the first record of a proven start. */
    private long expectedPrev;
    private Segment segment;
    private ByteBuffer view;
    private boolean closed;
    /** Long.MAX_VALUE for the application's readers; a scan's end for the log's own (then past the read limit). */
    private final long until;
    private final ControlSink controls;
    /** Restores compressed payloads; created at the first one. */
    private PayloadDecompressor decompressor;
    /** The offset in the current segment of the record being restored: where its dictionary must precede it. */
    private long restoring;
    private final DictionaryLookup dictionaries = id -> log().dictionary(id, segment, view, restoring);

    /**
     * @param expectedPrev the prev link the first record must carry (its start was proven a record boundary), or
     *                     {@link ReadStart#ANY_PREV}, or {@link ReadStart#UNPROVEN} (proven before the first read)
     */
    public LogReader(ReadPath log, long from, long expectedPrev, Visibility visibility) {
        this(log, from, expectedPrev, visibility, Long.MAX_VALUE, null);
    }

    /**
     * The log's own scan of its control records (cursors): up to {@code until} and the written position, past a
     * replica's read limit, handing each control record to {@code controls}. It returns no record: {@link #next()}
     * answers null once the scan reached its end (records are still validated on the way).
     */
    public LogReader(ReadPath log, long from, long expectedPrev, Visibility visibility, long until, ControlSink controls) {
        this.log = log;
        this.visibility = visibility;
        this.position = from;
        this.expectedPrev = expectedPrev;
        this.until = until;
        this.controls = controls;
    }

    /** Told of each control record a scanning reader passes (docs/format.md, "Control records"). */
    public interface ControlSink {
        void control(long lsn, ByteBuffer payload);
    }

    /** The LSN of the next record this reader will return (or wait for). */
    public long position() {
        return position;
    }

    public Visibility visibility() {
        return visibility;
    }

    /**
     * The next visible record, or null when the reader is at the current end.
     *
     * @throws LsnRemovedException   when the reader's position was truncated away
     * @throws WalCorruptedException when a record fails validation (the position is left on it)
     */
    public WalRecord next() {
        ensureOpen();
        long limit = limit();
        while (position < limit) {
            if (expectedPrev == ReadStart.UNPROVEN) {
                expectedPrev = log.expectedPrevAt(position); // written now (limit <= written): prove the start
            }
            Segment seg = enter(position);
            long o = position - seg.startLsn();
            RecordCursor record = cursor.start(view, seg.startLsn(), o, expectedPrev);
            int code = record.check();
            if (code != RecordCheck.VALID) {
                throw failOnInvalid(seg, code);
            }
            int flags = record.flags();
            boolean control = (flags & RecordDescriptor.FLAG_CONTROL) != 0;
            // Only what is handed out gets a view: padding never, control records only to the log's own scan, and the
            // application's records only to the application's readers.
            boolean wanted = (flags & RecordDescriptor.FLAG_PADDING) == 0 && control == (controls != null);
            ByteBuffer stored = wanted ? record.payload() : null;
            int type = record.type();
            long time = record.time();
            long lsn = position;
            long prevOfThis = expectedPrev;
            boolean closing = record.advance();
            expectedPrev = record.expectedPrev();
            position = record.lsn() + (closing ? SegmentHeaderDescriptor.LENGTH : 0);
            if (!wanted) {
                continue;
            }
            if (control) {
                controls.control(lsn, stored);
                continue; // the log's own: never an application's record
            }
            ByteBuffer payload = stored.asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
            int codec = flags & RecordDescriptor.CODEC_MASK;
            if (codec != 0) {
                if (decompressor == null) {
                    decompressor = new PayloadDecompressor();
                }
                restoring = o;
                ByteBuffer restored = decompressor.decompress(codec, payload, log.maxPayloadSize(), dictionaries);
                if (restored == null) {
                    // Its CRC passed, so it was stored so: damage all the same, never handed out (position left on it).
                    position = lsn;
                    expectedPrev = prevOfThis;
                    throw new WalCorruptedException("record at " + Lsn.format(lsn) + " in " + seg.path()
                            + " has a compressed payload that cannot be restored: " + decompressor.failure(), lsn, seg.path());
                }
                payload = restored;
            }
            return new WalRecord(lsn, position, type, time, payload);
        }
        return null;
    }

    /**
     * The next visible record, waiting up to {@code timeout} for one to appear.
     *
     * @return the record, or null when none appeared in time (or the log was closed meanwhile)
     */
    public WalRecord poll(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        while (true) {
            WalRecord r = next();
            if (r != null) {
                return r;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0 || !log.notifier().await(this::limit, position, left, TimeUnit.NANOSECONDS, log::isClosed)) {
                return log.isClosed() ? null : next();
            }
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            leave();
            if (decompressor != null) {
                decompressor.close(); // native contexts: not freed by the garbage collector
                decompressor = null;
            }
        }
    }

    private ReadPath log() {
        return log;
    }

    private long limit() {
        return controls == null ? log.visibleLsn(visibility) : Math.min(until, log.writtenLsn());
    }

    private void ensureOpen() {
        if (closed) {
            throw new WalClosedException("reader is closed");
        }
        if (log.isClosed()) {
            close();
            throw new WalClosedException("the log was closed");
        }
    }

    /** Makes {@code lsn}'s segment the current one, holding it against truncation. */
    private Segment enter(long lsn) {
        if (segment != null && segment.contains(lsn)) {
            return segment;
        }
        leave();
        Segment s = log.enterSegment(lsn);
        if (s == null) {
            throw new LsnRemovedException(lsn, log.oldestLsn());
        }
        segment = s;
        view = s.newView();
        if (lsn - s.startLsn() < SegmentHeaderDescriptor.LENGTH) {
            position = s.startLsn() + SegmentHeaderDescriptor.LENGTH;
        }
        return s;
    }

    private void leave() {
        if (segment != null) {
            segment.exit();
            segment = null;
            view = null;
        }
    }

    private WalException failOnInvalid(Segment seg, int code) {
        // Every position a reader stands on was proven a record boundary: a record failing there is damage.
        return new WalCorruptedException("record at " + Lsn.format(position) + " in " + seg.path()
                + " fails validation while reading: " + RecordCheck.describe(code), position, seg.path());
    }
}
