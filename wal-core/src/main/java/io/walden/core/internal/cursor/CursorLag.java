package io.walden.core.internal.cursor;

import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.walden.core.RecordTime;
import io.walden.core.internal.LogPositions;
import io.walden.core.internal.TimeIndex;
import io.walden.core.internal.record.RecordCursor;
import io.walden.core.internal.record.RecordDescriptor;

import java.time.Clock;

/**
 * How far behind the log's end each cursor is, in bytes and in time, for {@link CursorBook#list()} and the meters
 * ({@link CursorMeters}, whose gauges it answers). A cursor committed to the log's end lags 0, even though its own
 * control record moved the end past it.
 *
 * <p>Thread-safety: the gauges and {@link #meterBinder()} take the {@link CursorBook} lock (the {@code lock} given, that
 * object's monitor), as they are called from the meter registries' threads; {@link #trailing} and {@link #endFor} are
 * called under it; {@link #sample} and {@link #seconds} need no lock (the clock serialises itself).
 */
public final class CursorLag {
    /** When the log's end passed which LSN: the cursors' lag in time. */
    private final EndClock clock = new EndClock();
    /** The run of control records this log appended last, [start, end): a cursor committed to the log's end lags 0. */
    private long trailingControlStart = -1;
    private long trailingControlEnd = -1;

    /** The log's positions (not the facade: a part never reaches back up to Wal). */
    private final LogPositions positions;
    /** Each record's time, for the age of the first record a cursor has not consumed. */
    private final TimeIndex times;
    /** The log's record clock (WalConfig#clock): what a record's age is measured against. */
    private final Clock recordClock;
    /** The log's name in the meters' {@code log} tag. */
    private final String logName;
    /** The {@link CursorBook} object: its monitor guards {@link #state} and the trailing run. */
    private final Object lock;
    private final CursorState state;
    /** The gauges per cursor, added and removed with the cursors by their keepers, and the lost counter. */
    public final CursorMeters meters = new CursorMeters(this::lagBytes, this::lagSeconds);

    public CursorLag(LogPositions positions, TimeIndex times, Clock recordClock, String logName, Object lock, CursorState state) {
        this.positions = positions;
        this.times = times;
        this.recordClock = recordClock;
        this.logName = logName;
        this.lock = lock;
        this.state = state;
    }

    /** Extends (or starts) the run of trailing control records with the one at {@code lsn} (under the lock). */
    public void trailing(long lsn, int payloadLength) {
        if (lsn != trailingControlEnd) {
            trailingControlStart = lsn; // something else came between: a new run
        }
        trailingControlEnd = lsn + RecordDescriptor.aligned(RecordDescriptor.recordLength(payloadLength));
    }

    /** This log stopped appending its own records (it follows a primary, or was rewound): no run of its own trails. */
    public void forgetOwnRun() {
        trailingControlStart = -1;
        trailingControlEnd = -1;
    }

    /** The log's end as a cursor at {@code lsn} sees it: only the cursors' own records after it do not count. */
    public long endFor(long lsn, long end) {
        return end == trailingControlEnd && lsn >= trailingControlStart ? Math.min(lsn, end) : end;
    }

    /** The background writer's periodic sample of the log's end. */
    public void sample() {
        clock.sample(positions.insertLsn(), System.nanoTime());
    }

    /**
     * How far behind in time a cursor at {@code lsn} is, {@code end} being the log's end as {@link #endFor} gave it: the
     * age of the first record it has not consumed, from that record's time (docs/format.md, "Records"); 0 at the end.
     * For a record not written yet (appended moments ago), how long ago the log's end passed {@code lsn}. For a written
     * record without a time (format 1), how long ago the end passed it if this log saw that happen, else NaN: its age
     * is unknown, and a guess from when the log opened would show a record days old as seconds old.
     */
    public double seconds(long lsn, long end) {
        if (lsn >= end) {
            return 0;
        }
        long written = positions.writtenLsn();
        long time = times.timeAt(lsn, written);
        if (time != RecordCursor.NO_TIME) {
            return Math.max(0, RecordTime.toMicros(recordClock.instant()) - time) / 1e6;
        }
        double passed = clock.secondsSincePassed(lsn, System.nanoTime());
        return Double.isNaN(passed) && lsn >= written ? 0 : passed; // not written yet: appended since the last sample
    }

    /** {@code walden.cursor.lag.bytes} and {@code walden.cursor.lag.seconds} per cursor (tag {@code cursor}), {@code walden.cursor.lost}. */
    public MeterBinder meterBinder() {
        return registry -> {
            synchronized (lock) { // no cursor comes or goes while the registry gets its gauges
                meters.bindTo(registry, Tags.of("log", logName), state.lsns.keySet());
            }
        };
    }

    /** The gauge's value: NaN, as {@link #seconds} says, when the cursor's lag is unknown (Prometheus shows NaN). */
    private double lagSeconds(String name) {
        Long lsn;
        long end;
        synchronized (lock) {
            lsn = state.lsns.get(name);
            end = lsn == null ? 0 : endFor(lsn, positions.insertLsn());
        }
        return lsn == null ? 0 : seconds(lsn, end);
    }

    private double lagBytes(String name) {
        synchronized (lock) {
            Long lsn = state.lsns.get(name);
            return lsn == null ? 0 : Math.max(0, endFor(lsn, positions.insertLsn()) - lsn);
        }
    }
}
