package io.walden.server.auth;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** What a token allows: each role holds the ones below it; log patterns limit the logs whatever the role. */
class GrantTest {
    @Test
    void shouldLetEachRoleDoWhatTheRolesBelowItMay() {
        Grant append = new Grant(Role.APPEND, List.of());
        assertThat(append.permits(Role.READ, "orders")).isTrue();
        assertThat(append.permits(Role.APPEND, "orders")).isTrue();
        assertThat(append.permits(Role.ADMIN, "orders")).isFalse();
        assertThat(new Grant(Role.READ, List.of()).permits(Role.APPEND, "orders")).isFalse();
        assertThat(Grant.ALL.permits(Role.ADMIN, "anything")).isTrue();
    }

    @Test
    void shouldLimitATokenWithPatternsToTheLogsTheyMatch() {
        Grant orders = new Grant(Role.ADMIN, List.of(LogGlob.parse("orders*"), LogGlob.parse("audit")));
        assertThat(orders.permits(Role.ADMIN, "orders-eu")).isTrue();
        assertThat(orders.permits(Role.READ, "audit")).isTrue();
        assertThat(orders.permits(Role.READ, "default")).isFalse();
        assertThat(orders.limited()).isTrue();
        assertThat(orders.describeLogs()).isEqualTo("orders*, audit");
    }

    @Test
    void shouldPermitNothingToARequestThatPresentedNoToken() {
        assertThat(Grant.NONE.permits(Role.READ, "default")).isFalse();
        assertThat(Grant.NONE.permitsLog("default")).isFalse();
    }
}
