package io.walden.core.internal.thread;

import io.walden.core.RecordTime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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
 * one plain load. A busy reader's time is within a tick or so of the read (more only when the loop is starved of
 * CPU); after {@link #IDLE_TICKS} ticks in which no reader said it {@link #markUsed used} the time, the loop stops
 * ticking, and the first read after the pause reads the clock itself and wakes the loop, so an idle log's times are
 * exact.
 *
 * <p><b>One load.</b> Whether the loop ticks is in the time itself ({@link #IDLE} while it is stopped), and readers
 * say they use it only once a tick ({@link #markUsed}, from RecordClock when the time has moved past a log's last
 * one), not on every read: an append pays for one volatile load here, where a flag for the pause and one for the use
 * cost it three and a store.
 *
 * <p>The value may step back when the wall clock does: RecordClock keeps each log's times from decreasing.
 *
 * <p>Thread-safety: {@link #micros()} and {@link #markUsed()} from any thread. {@link #micros} is written by the loop
 * (a time, or {@link #IDLE} when it stops) and, from {@link #IDLE} only, by CAS, by the reader that wakes it;
 * {@link #used} is set by readers and cleared by the loop.
 */
public final class CachedWallClock {
    /** How often the cached time is refreshed while it is read. */
    public static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Ticks without a read after which the loop stops until the next read. */
    static final int IDLE_TICKS = 10;
    /** The idle of a stopped loop: a read wakes it long before (the runner's longest idle is a day). */
    private static final long STOPPED = TimeUnit.HOURS.toNanos(1);
    /** {@link #micros} while the loop is stopped: never a time (RecordTime's range ends well before it). */
    private static final long IDLE = Long.MIN_VALUE;
    private static final VarHandle MICROS;

    static {
        try {
            MICROS = MethodHandles.lookup().findVarHandle(CachedWallClock.class, "micros", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Clock clock;
    private final LongSupplier wall;
    /** The time the loop read last, or {@link #IDLE} while the loop is stopped. */
    private volatile long micros = IDLE;
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

    /** The time now, within a tick or so (a reader that uses it says so with {@link #markUsed}, once a tick). */
    public long micros() {
        long m = micros;
        return m != IDLE ? m : wake();
    }

    /**
     * Keeps the loop ticking: a reader used the time of this tick. Once a tick is enough (the loop stops after
     * {@link #IDLE_TICKS} ticks without it); a call while the flag is set stores nothing.
     */
    public void markUsed() {
        if (!used) {
            used = true;
        }
    }

    private long wake() {
        long t = wall.getAsLong();
        if (MICROS.compareAndSet(this, IDLE, t)) { // one reader wakes the loop; the others read the clock meanwhile
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
                if (micros == IDLE) {
                    quiet = 0;
                    return STOPPED; // until a read wakes it
                }
                if (used) {
                    used = false;
                    quiet = 0;
                } else if (++quiet >= IDLE_TICKS) {
                    micros = IDLE; // a read that still took the old value took one at most a tick or so stale
                    return STOPPED;
                }
                micros = wall.getAsLong(); // only the loop stores a time over a time: no reader's is lost
                return TICK_NANOS;
            }
        };
    }
}
