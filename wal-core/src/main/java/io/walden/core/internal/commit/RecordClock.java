package io.walden.core.internal.commit;

import io.walden.core.internal.thread.CachedWallClock;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The time each record carries (docs/format.md, "Records": microseconds since the epoch, UTC): the primary's wall
 * clock, never decreasing in LSN order.
 *
 * <p><b>Why cached.</b> Reading the wall clock costs 25-40 ns here, as much as half an {@code off} append, so the time
 * comes from a {@link CachedWallClock}, which a background loop refreshes every millisecond while the log (or any log
 * of its store) appends, and which reads the clock itself after a pause: two plain loads on x86 (the cached time and
 * this clock's own {@link #latest}), and, once a tick, when the time has moved past {@link #latest}, the CAS that raises
 * it and the wall clock's {@link CachedWallClock#markUsed} that keeps its loop ticking. A busy log's times are within a
 * tick or so of the append; an idle log's are exact.
 *
 * <p><b>Why never decreasing.</b> {@link #latest} only rises (the larger of itself and the clock), so a clock stepped
 * back keeps the last time until it catches up, as Kafka's log-append time does. Appenders read it between loading
 * the insert position and the CAS that reserves their LSN (Reservations.reserve); an appender that reserves after
 * another loaded the insert after that other's CAS, so after its read: the later LSN never gets the earlier time. The
 * log's last time on open ({@link #observe}, from recovery) and every replicated record's time (a replica that is
 * promoted goes on from its primary's times) raise it too.
 *
 * <p>Thread-safety: every method from any thread.
 */
public final class RecordClock {
    private static final VarHandle LATEST;

    static {
        try {
            LATEST = MethodHandles.lookup().findVarHandle(RecordClock.class, "latest", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final CachedWallClock wall;
    /** The latest time handed out or observed: only rises (CAS to a larger value). Read by every append. */
    private volatile long latest;

    /** @param wall the wall clock, cached (the log's own, or its store's) */
    public RecordClock(CachedWallClock wall) {
        this.wall = wall;
    }

    /** The time for a record reserved now (see the class comment for where to call it). */
    public long now() {
        long t = wall.micros();
        long l = latest;
        return t > l ? advance(t) : l;
    }

    /** The time moved past {@link #latest} (once a tick while the log appends): keeps the wall clock ticking, raises. */
    private long advance(long t) {
        wall.markUsed();
        return raiseTo(t);
    }

    /** Raises the clock to {@code micros} (a time already in the log): later records never carry less. */
    public void observe(long micros) {
        raiseTo(micros);
    }

    /** The latest time handed out or observed (0 before any). */
    public long latest() {
        return latest;
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
}
