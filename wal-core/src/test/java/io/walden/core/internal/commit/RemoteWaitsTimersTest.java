package io.walden.core.internal.commit;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** How long the remote waits' timers idle between turns ({@link RemoteWaits#untilNextTurn}). */
class RemoteWaitsTimersTest {
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final long NO_TIMEOUT = Long.MAX_VALUE;
    private static final long START = 1_000 * SECOND;

    @Test
    void withoutATimeoutTheyIdleUntilTheWatchsNextLookLongAfterTheyStarted() {
        long now = START + 60 * SECOND; // a minute on: the last expiry is still the start, since none ever ran
        long untilNext = RemoteWaits.untilNextTurn(now, START, NO_TIMEOUT, now, SECOND);

        assertThat(untilNext).as("idle after a look, with no timeout").isEqualTo(SECOND);
    }

    @Test
    void withATimeoutTheyIdleUntilTheNextExpiryWhenItComesBeforeTheNextLook() {
        long period = TimeUnit.MILLISECONDS.toNanos(25);
        long now = START + 10 * SECOND;
        long untilNext = RemoteWaits.untilNextTurn(now, now, period, now - SECOND / 2, SECOND);

        assertThat(untilNext).isEqualTo(period);
    }

    @Test
    void aTurnThatIsLateIsFollowedAtOnce() {
        long period = TimeUnit.MILLISECONDS.toNanos(25);
        long now = START + 10 * SECOND;
        long untilNext = RemoteWaits.untilNextTurn(now, now - 2 * period, period, now, SECOND);

        assertThat(untilNext).isEqualTo(1);
    }
}
