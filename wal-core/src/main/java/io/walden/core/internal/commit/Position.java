package io.walden.core.internal.commit;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

abstract class PositionLhsPadding {
    long p01, p02, p03, p04, p05, p06, p07;
}

abstract class PositionValue extends PositionLhsPadding {
    public volatile long value;
}

abstract class PositionRhsPadding extends PositionValue {
    long p11, p12, p13, p14, p15, p16, p17;
}

/**
 * A log position (an LSN) that only moves forward, padded on both sides so that the insert, written
 * and flushed positions, each hammered by different threads, never share a cache line (the padding
 * protects the readers of one from the writers of the others, as the Disruptor's {@code Sequence} does).
 *
 * <p>Thread-safety: every method may be called from any thread. Reads are volatile; {@link #advanceTo}
 * is a CAS loop, so concurrent advancers never move the value backwards.
 */
public final class Position extends PositionRhsPadding {
    private static final VarHandle VALUE;

    static {
        try {
            VALUE = MethodHandles.lookup().findVarHandle(PositionValue.class, "value", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    public Position(long initial) {
        this.value = initial;
    }

    public long get() {
        return value;
    }

    public boolean compareAndSet(long expected, long next) {
        return VALUE.compareAndSet(this, expected, next);
    }

    /** Sets without a race: only for a position with a single writer (the flush leader's flushed position). */
    public void set(long next) {
        value = next;
    }

    /** Raises the value to {@code target} unless it is already there or beyond; returns the value after. */
    public long advanceTo(long target) {
        long current;
        while ((current = value) < target) {
            if (VALUE.compareAndSet(this, current, target)) {
                return target;
            }
        }
        return current;
    }

    @Override
    public String toString() {
        return Long.toString(value);
    }
}
