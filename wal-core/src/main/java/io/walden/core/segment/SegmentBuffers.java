package io.walden.core.segment;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The pool of WAL buffers ({@link SegmentBuffer}): one per segment that appenders may write to, which is the
 * segment at the insert position and the one prepared ahead of it, plus the one whose last bytes are still on
 * their way to the file. A buffer whose segment the file holds whole is retired and reused (zeroed) once a grace
 * period has passed; a new one is allocated only when none can be reused yet, so a log holds two or three.
 *
 * <p>Thread-safety: synchronized; called at segment preparation and when a segment is written whole, never per
 * record.
 */
public final class SegmentBuffers implements AutoCloseable {
    private final long segmentSize;
    private final Supplier<BooleanSupplier> gracePeriods;
    private final ArrayDeque<Retired> retired = new ArrayDeque<>();
    private int allocated;
    private boolean closed;

    private record Retired(Segment segment, SegmentBuffer buffer, BooleanSupplier graceOver) {
    }

    /**
     * @param gracePeriods starts a grace period when called; the answer turns true once every appender-side thread
     *                     that was inside the log when it started has left
     */
    public SegmentBuffers(long segmentSize, Supplier<BooleanSupplier> gracePeriods) {
        this.segmentSize = segmentSize;
        this.gracePeriods = gracePeriods;
    }

    /** Gives {@code segment} a zeroed buffer (a reused one when its grace period passed, else a new one). */
    public synchronized void attach(Segment segment) {
        if (closed) {
            throw new IllegalStateException("the log's buffers are released");
        }
        if (segment.buffer() != null) {
            return;
        }
        SegmentBuffer buffer = null;
        for (Iterator<Retired> it = retired.iterator(); it.hasNext(); ) {
            Retired r = it.next();
            if (r.graceOver().getAsBoolean()) {
                it.remove();
                r.segment().detachBuffer(r.buffer());
                buffer = r.buffer();
                buffer.zero(0, segmentSize);
                break;
            }
        }
        if (buffer == null) {
            buffer = SegmentBuffer.allocate(segmentSize);
            allocated++;
        }
        segment.attachBuffer(buffer);
    }

    /** The file holds {@code segment} whole: its buffer may be reused once every thread inside now has left. */
    public synchronized void retire(Segment segment) {
        SegmentBuffer buffer = segment.buffer();
        if (buffer == null || closed) {
            return;
        }
        for (Retired r : retired) {
            if (r.segment() == segment) {
                return;
            }
        }
        retired.add(new Retired(segment, buffer, gracePeriods.get()));
    }

    /** Buffers allocated so far (for tests and meters). */
    public synchronized int allocated() {
        return allocated;
    }

    /**
     * Frees every buffer. Only once no thread is inside the log (close). Buffers still attached to segments are freed
     * by {@link #free(Segment)}.
     */
    @Override
    public synchronized void close() {
        closed = true;
        for (Retired r : retired) {
            r.segment().detachBuffer(r.buffer());
            r.buffer().free();
        }
        retired.clear();
    }

    /** Frees {@code segment}'s buffer, if it has one (at close, after {@link #close()}). */
    public static void free(Segment segment) {
        SegmentBuffer b = segment.buffer();
        if (b != null) {
            segment.detachBuffer(b);
            b.free();
        }
    }
}
