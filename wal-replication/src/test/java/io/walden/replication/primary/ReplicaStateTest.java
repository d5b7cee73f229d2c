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
    }
}
