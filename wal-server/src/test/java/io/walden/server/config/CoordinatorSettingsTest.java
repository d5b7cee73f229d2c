package io.walden.server.config;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static io.walden.server.config.ServerSettings.COORDINATOR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CoordinatorSettingsTest {
    private static Map<String, String> member() {
        Map<String, String> flags = new HashMap<>();
        flags.put("coordinator", "zk://127.0.0.1:2181/walden/g");
        flags.put("name", "a");
        flags.put("replication-listen", "127.0.0.1:7401");
        return flags;
    }

    @Test
    void shouldAcceptAMemberWithANameAndAReplicationAddressAndDefaultTheSessionTimeout() throws Exception {
        ServerConfig c = ServerConfig.load(null, member());
        assertThat(c.get(COORDINATOR)).isEqualTo("zk://127.0.0.1:2181/walden/g");
        assertThat(c.coordinatorSessionTimeoutMillis()).isEqualTo(6000);
    }

    @Test
    void shouldRefuseAMemberWithoutANameOfItsOwn() {
        Map<String, String> flags = member();
        flags.remove("name");
        assertThatThrownBy(() -> ServerConfig.load(null, flags)).hasMessageContaining("--name");
    }

    @Test
    void shouldRefuseAMemberWithoutAReplicationAddress() {
        Map<String, String> flags = member();
        flags.remove("replication-listen");
        assertThatThrownBy(() -> ServerConfig.load(null, flags)).hasMessageContaining("--replication-listen");
    }

    @Test
    void shouldRefuseACoordinatorTogetherWithReplicateFrom() {
        Map<String, String> flags = member();
        flags.put("replicate-from", "127.0.0.1:7402");
        assertThatThrownBy(() -> ServerConfig.load(null, flags)).hasMessageContaining("exclude each other");
    }

    @Test
    void shouldRefuseAMalformedCoordinatorOrSessionTimeout() {
        Map<String, String> flags = member();
        flags.put("coordinator", "zookeeper:2181");
        assertThatThrownBy(() -> ServerConfig.load(null, flags)).hasMessageContaining("zk://HOST:PORT");
        Map<String, String> tooShort = member();
        tooShort.put("coordinator-session-timeout-ms", "100");
        assertThatThrownBy(() -> ServerConfig.load(null, tooShort)).hasMessageContaining("must be from 1s to 120s");
    }
}
