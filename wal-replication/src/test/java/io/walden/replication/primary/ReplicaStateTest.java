package io.walden.replication.primary;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** How a primary takes a replica's status reports: what it believes the replica holds, and when it counts. */
class ReplicaStateTest {
    private static final long START = 4096;

    @Test
    void shouldNeverBelieveAReplicaHoldsMoreThanWasSentToIt() {
        ReplicaState state = new ReplicaState("r1", 0, START);
        state.sent(8192, 0);
        state.report(1 << 20, 1 << 20, 1 << 20, 0);
        assertThat(state.written).isEqualTo(8192);
        assertThat(state.flushed).isEqualTo(8192);
        assertThat(state.applied).isEqualTo(8192);
    }

    @Test
    void shouldNeverMoveAReportedPositionBack() {
        ReplicaState state = new ReplicaState("r1", 0, START);
        state.sent(8192, 0);
        state.report(8192, 6000, 5000, 0);
        state.report(4096, 4096, 4096, 0); // a late or reordered report
        assertThat(state.written).isEqualTo(8192);
        assertThat(state.flushed).isEqualTo(6000);
        assertThat(state.applied).isEqualTo(5000);
    }

    @Test
    void shouldSayCaughtUpOnceWhenTheFlushReachesTheBacklogItHadWhenItConnected() {
        ReplicaState state = new ReplicaState("r1", 16384, START);
        state.sent(16384, 0);
        assertThat(state.report(16384, 12000, 12000, 0)).isFalse();
        assertThat(state.streaming).isFalse();
        assertThat(state.report(16384, 16384, 12000, 0)).as("the report that caught it up").isTrue();
        assertThat(state.streaming).isTrue();
        assertThat(state.report(16384, 16384, 16384, 0)).as("only once").isFalse();
    }

    @Test
    void shouldMeasureEachLagFromWhenThatPositionWasSent() {
        ReplicaState state = new ReplicaState("r1", 0, START);
        long t0 = TimeUnit.SECONDS.toNanos(100);
        state.sent(8192, t0);
        state.sent(12288, t0 + TimeUnit.MILLISECONDS.toNanos(40));
        state.report(12288, 8192, START, t0 + TimeUnit.MILLISECONDS.toNanos(50));
        assertThat(state.writeLagMillis).isEqualTo(10);
        assertThat(state.flushLagMillis).isEqualTo(50);
        assertThat(state.applyLagMillis).as("nothing sent at or below the start is known").isEqualTo(-1);
        assertThat(state.waitingMillis(state.applied, t0 + TimeUnit.MILLISECONDS.toNanos(50)))
                .as("but the oldest unapplied position has waited 50 ms").isEqualTo(50);
    }

    @Test
    void anIdleReplicaThatReportedEverythingSentHasNoLag() {
        ReplicaState state = new ReplicaState("r1", 0, START);
        long t0 = TimeUnit.SECONDS.toNanos(100);
        state.sent(8192, t0);
        state.report(8192, 8192, 8192, t0 + TimeUnit.MILLISECONDS.toNanos(5));
        assertThat(state.flushLagMillis).isEqualTo(5);
        assertThat(state.measuredFlush).isEqualTo(5);

        for (int keepalive = 1; keepalive <= 4; keepalive++) { // idle: the same positions at every keepalive
            state.report(8192, 8192, 8192, t0 + TimeUnit.SECONDS.toNanos(15L * keepalive));
            assertThat(state.measuredWrite).as("nothing new measured").isEqualTo(-1);
            assertThat(state.measuredFlush).isEqualTo(-1);
            assertThat(state.measuredApply).isEqualTo(-1);
            assertThat(state.writeLagMillis).as("no lag shown, not a growing one").isEqualTo(-1);
            assertThat(state.flushLagMillis).isEqualTo(-1);
            assertThat(state.applyLagMillis).isEqualTo(-1);
        }
    }

    @Test
    void aCaughtUpReplicaShowsItsLastLagForAMomentThenNone() {
        ReplicaState state = new ReplicaState("r1", 0, START);
        long t0 = TimeUnit.SECONDS.toNanos(100);
        state.sent(8192, t0);
        state.report(8192, 8192, 8192, t0 + TimeUnit.MILLISECONDS.toNanos(5));
        state.report(8192, 8192, 8192, t0 + TimeUnit.MILLISECONDS.toNanos(500));
        assertThat(state.flushLagMillis).isEqualTo(5);
        state.report(8192, 8192, 8192, t0 + TimeUnit.MILLISECONDS.toNanos(5) + ReplicaState.SHOW_AFTER_CATCH_UP_NANOS);
        assertThat(state.flushLagMillis).isEqualTo(-1);
    }

    @Test
    void aStuckReplicasWaitGrowsWithTheAgeOfWhatItHasNotReportedEvenWithoutReports() {
        ReplicaState state = new ReplicaState("r1", 0, START);
        long t0 = TimeUnit.SECONDS.toNanos(100);
        state.sent(8192, t0);
        state.sent(12288, t0 + TimeUnit.MILLISECONDS.toNanos(10));
        state.report(12288, 8192, 8192, t0 + TimeUnit.MILLISECONDS.toNanos(20));
        assertThat(state.flushLagMillis).isEqualTo(20);

        // The flush does not move, and the replica reports nothing more (stuck in a force): asked later, it has waited.
        assertThat(state.waitingMillis(state.flushed, t0 + TimeUnit.SECONDS.toNanos(5))).as("since 12288 was sent")
                .isEqualTo(4990);
        assertThat(state.waitingMillis(state.flushed, t0 + TimeUnit.SECONDS.toNanos(10))).isEqualTo(9990);
        assertThat(state.waitingMillis(state.written, t0 + TimeUnit.SECONDS.toNanos(10))).as("written: all of it")
                .isZero();
        state.report(12288, 8192, 8192, t0 + TimeUnit.SECONDS.toNanos(10));
        assertThat(state.measuredFlush).as("a wait is no lag measured: the timers record completed positions only")
                .isEqualTo(-1);
    }

    @Test
    void aFullSampleBufferKeepsTheOldestUnreportedPosition() {
        ReplicaState state = new ReplicaState("r1", 0, START);
        long t0 = TimeUnit.SECONDS.toNanos(100);
        for (int i = 1; i <= 10_000; i++) {
            state.sent(START + 4096L * i, t0 + TimeUnit.MILLISECONDS.toNanos(i));
        }
        assertThat(state.waitingMillis(START, t0 + TimeUnit.SECONDS.toNanos(20))).as("since the first was sent")
                .isEqualTo(19_999);
    }

    @Test
    void eachSentPositionIsMeasuredOncePerLevel() {
        ReplicaState state = new ReplicaState("r1", 0, START);
        long t0 = TimeUnit.SECONDS.toNanos(100);
        state.sent(8192, t0);
        state.sent(12288, t0 + TimeUnit.MILLISECONDS.toNanos(10));
        state.report(8192, 8192, 8192, t0 + TimeUnit.MILLISECONDS.toNanos(12));
        assertThat(state.measuredWrite).isEqualTo(12);
        state.report(12288, 8192, 8192, t0 + TimeUnit.MILLISECONDS.toNanos(13));
        assertThat(state.measuredWrite).as("12288, sent 3 ms before").isEqualTo(3);
        assertThat(state.measuredFlush).as("8192 was measured already").isEqualTo(-1);
    }
}
