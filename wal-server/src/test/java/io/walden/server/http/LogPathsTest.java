package io.walden.server.http;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The log a request path names, which a token's log patterns are checked against before the body is read. */
class LogPathsTest {
    @Test
    void shouldNameTheLogOfAPerLogPath() {
        assertThat(LogPaths.logOf("/v1/logs/orders/records")).isEqualTo("orders");
        assertThat(LogPaths.logOf("/v1/logs/orders/records/batch")).isEqualTo("orders");
        assertThat(LogPaths.logOf("/v1/logs/orders/cursors/billing")).isEqualTo("orders");
        assertThat(LogPaths.logOf("/v1/logs/orders")).as("describe, change, delete").isEqualTo("orders");
    }

    @Test
    void shouldNameTheDefaultLogForTodaysDataPaths() {
        assertThat(LogPaths.logOf("/v1/records")).isEqualTo("default");
        assertThat(LogPaths.logOf("/v1/records/stream")).isEqualTo("default");
        assertThat(LogPaths.logOf("/v1/cursors")).isEqualTo("default");
        assertThat(LogPaths.logOf("/v1/cursors/billing")).isEqualTo("default");
        assertThat(LogPaths.logOf("/v1/recordsx")).as("not a data path").isNull();
    }

    @Test
    void shouldNameNoLogForTheListTheProbesAndTheAdminEndpoints() {
        assertThat(LogPaths.logOf("/v1/logs")).isNull();
        assertThat(LogPaths.logOf("/admin/checkpoint")).isNull();
        assertThat(LogPaths.logOf("/health")).isNull();
        assertThat(LogPaths.logOf("/v1/openapi.json")).isNull();
    }

    @Test
    void shouldDecodeTheLogSegmentAsTheRoutesDo() {
        assertThat(LogPaths.logOf("/v1/logs/%6Frders/records")).isEqualTo("orders");
        assertThat(LogPaths.logOf("/v1/logs/a%2Fb/records")).as("no log is named so: no pattern matches it").isEqualTo("a/b");
        assertThat(LogPaths.logOf("/v1/logs/bad%zz/records")).as("malformed: kept as it is").isEqualTo("bad%zz");
        assertThat(LogPaths.logOf("/v1/logs//records")).isEmpty();
    }

    @Test
    void shouldTellWhatActsOnTheWholeServer() {
        assertThat(LogPaths.serverWide("/admin/promote")).isTrue();
        assertThat(LogPaths.serverWide("/admin")).isTrue();
        assertThat(LogPaths.serverWide("/administer")).isFalse();
        assertThat(LogPaths.serverWide("/v1/logs/orders")).isFalse();
    }
}
