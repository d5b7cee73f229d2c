package io.walden.replication.policy;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SyncPolicyTest {
    @Test
    void shouldReleaseFirstNAtTheSlowestOfTheHighestPriorityConnectedReplicas() {
        SyncPolicy p = SyncPolicy.parse("FIRST 2 (a, b, c)");
        assertThat(p.confirmed(Map.of("a", 100L, "b", 50L, "c", 500L))).isEqualTo(50);
        assertThat(p.confirmed(Map.of("a", 100L, "c", 500L))).as("b is down: c takes its place").isEqualTo(100);
        assertThat(p.confirmed(Map.of("c", 500L))).as("too few connected: nothing confirmed").isZero();
    }

    @Test
    void shouldReleaseAnyNAtTheNthLargestPosition() {
        SyncPolicy p = SyncPolicy.parse("any 2 (a, b, c)");
        assertThat(p.isQuorum()).isTrue();
        assertThat(p.confirmed(Map.of("a", 100L, "b", 50L, "c", 500L))).isEqualTo(100);
        assertThat(p.confirmed(Map.of("a", 100L, "x", 900L))).as("x is not named").isZero();
    }

    @Test
    void shouldReadAPlainListAsFirstOne() {
        SyncPolicy p = SyncPolicy.parse("a, b");
        assertThat(p.toString()).isEqualTo("FIRST 1 (a, b)");
        assertThat(p.confirmed(Map.of("b", 7L))).isEqualTo(7);
    }

    @Test
    void shouldRefuseMalformedPolicies() {
        assertThatThrownBy(() -> SyncPolicy.parse("FIRST 3 (a, b)")).hasMessageContaining("waits for 3 of 2");
        assertThatThrownBy(() -> SyncPolicy.parse("SOME 1 (a)")).hasMessageContaining("not a synchronous replica policy");
        assertThatThrownBy(() -> SyncPolicy.parse("ANY 1 (a, a)")).hasMessageContaining("named twice");
        assertThatThrownBy(() -> SyncPolicy.parse("FIRST 1 (a b)")).hasMessageContaining("bad replica name");
        assertThatThrownBy(() -> SyncPolicy.parse(" ")).hasMessageContaining("empty");
    }
}
