package io.walden.core.internal.commit;

import io.walden.core.RecordTime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * The time each record carries (docs/format.md, "Records": microseconds since the epoch, UTC): the primary's wall
 * clock, never decreasing in LSN order.
 *
 * <p><b>Why cached.</b> Reading the wall clock costs 25-40 ns here, as much as half an {@code off} append. So, as
 * Cassandra's ApproximateTime and Aeron's CachedEpochClock do, a thread of its own ({@code walden-clock}) reads it
 * every {@link #TICK_NANOS} while the log is busy and appenders read that value: two volatile loads (idle, then
 * latest), plain loads on x86. A busy log's times are within a tick or so of the append (more only when the ticker
 * is starved of CPU); after {@link #IDLE_TICKS} ticks without an append the ticker sleeps, and the first append after
 * the pause reads the clock itself and wakes it, so an idle log's times are exact.
 *
 * <p><b>Why never decreasing.</b> {@link #latest} only rises (the larger of itself and the clock), so a clock stepped
 * back keeps the last time until it catches up, as Kafka's log-append time does. Appenders read it between loading
 * the insert position and the CAS that reserves their LSN (Reservations.reserve); an appender that reserves after
 * another loaded the insert after that other's CAS, so after its read: the later LSN never gets the earlier time. The
 * log's last time on open ({@link #observe}, from recovery) and every replicated record's time (a replica that is
 * promoted goes on from its primary's times) raise it too.
 *
 * <p>Thread-safety: {@link #now} and {@link #observe} from any thread; {@link #start}/{@link #close} once each.
 */
public final class RecordClock implements AutoCloseable {
    /** How often a busy log's cached time is refreshed. */
    static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Ticks without an append after which the ticker sleeps until the next append. */
    static final int IDLE_TICKS = 10;
    private static final VarHandle LATEST;

    static {
        try {
            LATEST = MethodHandles.lookup().findVarHandle(RecordClock.class, "latest", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final LongSupplier wallMicros;
    private final LongSupplier insert;
    /** The latest time handed out or observed: only rises (CAS to a larger value). Read by every append. */
    private volatile long latest;
    private volatile boolean idle = true;
    private volatile boolean running;
    private Thread ticker;

    /**
     * @param clock  the wall clock (the system's UTC clock; tests step it)
     * @param insert the log's insert position: the ticker sleeps when it stops moving
     */
    public RecordClock(Clock clock, LongSupplier insert) {
        this.wallMicros = () -> RecordTime.toMicros(clock.instant());
        this.insert = insert;
    }

    /** The time for a record reserved now (see the class comment for where to call it). */
    public long now() {
        return idle ? wake() : latest;
    }

    /** Raises the clock to {@code micros} (a time already in the log): later records never carry less. */
    public void observe(long micros) {
        raiseTo(micros);
    }

    /** The latest time handed out or observed (0 before any). */
    public long latest() {
        return latest;
    }

    private long wake() {
        long t = advance();
        if (idle) {
            idle = false;
            LockSupport.unpark(ticker);
        }
        return t;
    }

    private long advance() {
        return raiseTo(wallMicros.getAsLong());
    }

    /** Sets {@link #latest} to {@code micros} if that is larger; returns the value it holds then. */
    private long raiseTo(long micros) {
        for (long now = latest; ; now = latest) {
            if (micros <= now) {
                return now;
            }
            if (LATEST.compareAndSet(this, now, micros)) {
                return micros;
            }
        }
    }

    public void start() {
        running = true;
        ticker = new Thread(this::tick, "walden-clock");
        ticker.setDaemon(true);
        ticker.start();
    }

    private void tick() {
        long lastInsert = insert.getAsLong();
        int quiet = 0;
        while (running) {
            if (idle) {
                LockSupport.park(this); // until an append wakes it (or close)
                quiet = 0;
                lastInsert = insert.getAsLong();
                continue;
            }
            LockSupport.parkNanos(this, TICK_NANOS);
            advance();
            long at = insert.getAsLong();
            if (at != lastInsert) {
                lastInsert = at;
                quiet = 0;
            } else if (++quiet >= IDLE_TICKS) {
                idle = true; // an append that still read the old value read one at most a tick or so stale
            }
        }
    }

    @Override
    public void close() {
        running = false;
        Thread t = ticker;
        if (t != null) {
            LockSupport.unpark(t);
            try {
                t.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
