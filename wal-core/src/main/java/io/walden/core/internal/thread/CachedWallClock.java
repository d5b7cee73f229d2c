package io.walden.core.internal.thread;

import io.walden.core.RecordTime;

import java.time.Clock;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The wall clock in microseconds, read by a background loop every {@link #TICK_NANOS} while someone reads it often,
 * and read directly otherwise: what every record's time comes from (io.walden.core.internal.commit.RecordClock). One
 * serves a log opened on its own, on a thread of its own ({@code walden-clock}); one serves every log of a store, so
 * that a thousand logs cost one tick a millisecond, not a thousand.
 *
 * <p><b>Why cached.</b> Reading the wall clock costs 25-40 ns here, as much as half an {@code off} append. So, as
 * Cassandra's ApproximateTime and Aeron's CachedEpochClock do, the loop reads it and readers read that value: on x86,
 * plain loads. A busy reader's time is within a tick or so of the read (more only when the loop is starved of CPU);
 * after {@link #IDLE_TICKS} ticks in which nobody read it, the loop stops ticking, and the first read after the pause
 * reads the clock itself and wakes the loop, so an idle log's times are exact.
 *
 * <p>The value may step back when the wall clock does: RecordClock keeps each log's times from decreasing.
 *
 * <p>Thread-safety: {@link #micros()} from any thread; the loop's fields are its own. {@link #used} is written by
 * readers only when it is false (once a tick at most), so that a busy reader does not write a shared line each time.
 */
public final class CachedWallClock {
    /** How often the cached time is refreshed while it is read. */
    public static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Ticks without a read after which the loop stops until the next read. */
    static final int IDLE_TICKS = 10;
    /** The idle of a stopped loop: a read wakes it long before (the runner's longest idle is a day). */
    private static final long STOPPED = TimeUnit.HOURS.toNanos(1);

    private final Clock clock;
    private final LongSupplier wall;
    private volatile long micros;
    private volatile boolean idle = true;
    private volatile boolean used;
    private LoopRunner runner;

    /** A cached {@code clock}; {@link #start} gives it the runner that ticks it. */
    public CachedWallClock(Clock clock) {
        this.clock = clock;
        this.wall = () -> RecordTime.toMicros(clock.instant());
    }

    /** The clock it caches. */
    public Clock clock() {
        return clock;
    }

    /** The time now, within a tick or so. */
    public long micros() {
        if (idle) {
            return wake();
        }
        if (!used) {
            used = true;
        }
        return micros;
    }

    private long wake() {
        long t = wall.getAsLong();
        micros = t;
        if (idle) {
            idle = false;
            used = true;
            LoopRunner r = runner;
            if (r != null) {
                r.start(); // the first read starts the loop (later ones find it started)
                r.wake();
            }
        }
        return t;
    }

    /** Ticks on {@code runner}'s loop (made from {@link #ticking()}), from the first read on. */
    void ticksOn(LoopRunner runner) {
        this.runner = runner;
    }

    /** The loop that ticks it. */
    Loop ticking() {
        return new Loop() {
            private int quiet;

            @Override
            public long doWork() {
                if (idle) {
                    quiet = 0;
                    return STOPPED; // until a read wakes it
                }
                micros = wall.getAsLong();
                if (used) {
                    used = false;
                    quiet = 0;
                } else if (++quiet >= IDLE_TICKS) {
                    idle = true; // a read that still took the old value took one at most a tick or so stale
                    return STOPPED;
                }
                return TICK_NANOS;
            }
        };
    }
}
