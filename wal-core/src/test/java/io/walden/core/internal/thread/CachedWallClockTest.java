package io.walden.core.internal.thread;

import io.walden.core.RecordTime;
import io.walden.core.RecordTimeTest.SteppedClock;
import io.walden.core.internal.commit.RecordClock;
import org.junit.jupiter.api.Test;

import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The cached wall clock's loop, turned by hand (no runner: a read that wakes it starts nothing): it ticks while its
 * readers use the time, stops after {@link CachedWallClock#IDLE_TICKS} ticks without, and the first read after the
 * pause reads the clock itself, so an idle log's times are exact.
 */
class CachedWallClockTest {
    private static final Instant START = Instant.parse("2026-11-27T18:00:00Z");

    private final SteppedClock clock = new SteppedClock(START);
    private final CachedWallClock cached = new CachedWallClock(clock);
    private final Loop loop = cached.ticking();

    private void step(long micros) {
        clock.now.set(clock.now.get().plusNanos(micros * 1000));
    }

    private long wall() {
        return RecordTime.toMicros(clock.instant());
    }

    @Test
    void shouldGiveTheTimeOfTheLastTickBetweenTicks() throws Exception {
        assertThat(cached.micros()).isEqualTo(wall()); // the first read reads the clock itself
        step(1000);
        assertThat(loop.doWork()).isEqualTo(CachedWallClock.TICK_NANOS);
        long tick = wall();
        step(300);
        assertThat(cached.micros()).isEqualTo(tick);
    }

    @Test
    void shouldTickOnWhileAReaderMarksTheTimeUsedOnceATick() throws Exception {
        cached.micros();
        for (int i = 0; i < 3 * CachedWallClock.IDLE_TICKS; i++) {
            step(1000);
            assertThat(loop.doWork()).isEqualTo(CachedWallClock.TICK_NANOS);
            cached.micros();
            cached.markUsed();
        }
    }

    @Test
    void shouldStopWithoutUseAndReadTheClockItselfAfterThePause() throws Exception {
        cached.micros(); // wakes the loop, which counts this read as a use
        long idle = 0;
        for (int i = 0; i <= CachedWallClock.IDLE_TICKS; i++) {
            cached.micros(); // reads alone are not uses
            step(1000);
            idle = loop.doWork();
        }
        assertThat(idle).isGreaterThan(CachedWallClock.TICK_NANOS);
        step(1);
        assertThat(cached.micros()).isEqualTo(wall()); // exact: the loop did not tick for it
        assertThat(loop.doWork()).isEqualTo(CachedWallClock.TICK_NANOS); // and that read woke it
    }

    @Test
    void shouldBeKeptTickingByALogsRecordClockWhileItsTimesMoveOn() throws Exception {
        RecordClock records = new RecordClock(cached);
        records.now();
        for (int i = 0; i < 3 * CachedWallClock.IDLE_TICKS; i++) {
            step(1000);
            assertThat(loop.doWork()).isEqualTo(CachedWallClock.TICK_NANOS);
            assertThat(records.now()).isEqualTo(wall());
        }
    }

    @Test
    void shouldHoldARecordClocksLastTimeWhileTheWallClockIsBehindIt() throws Exception {
        RecordClock records = new RecordClock(cached);
        long last = records.now();
        step(-5_000_000); // stepped back 5 s: the log's times hold at its last until the clock catches up
        for (int i = 0; i <= 3 * CachedWallClock.IDLE_TICKS; i++) { // ticking, pausing (no time moves past the last), woken
            loop.doWork();
            assertThat(records.now()).isEqualTo(last);
        }
        step(10_000_000);
        loop.doWork();
        assertThat(records.now()).isEqualTo(wall());
    }
}
