package io.walden.server.config;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static io.walden.server.config.ServerSettings.CLUSTER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The settings of a server of a cluster ({@code --cluster}, docs/cluster.md), checked when they are loaded. */
class ClusterSettingsTest {
    private static Map<String, String> server() {
        Map<String, String> flags = new HashMap<>();
        flags.put("cluster", "zk://127.0.0.1:2181/walden/prod");
        flags.put("name", "s1");
        flags.put("http", "127.0.0.1:7400");
        flags.put("replication-listen", "127.0.0.1:7401");
        return flags;
    }

    @Test
    void aServerWithANameAndReachableAddressesJoinsTheClusterNamedByThePath() throws Exception {
        assertThat(ServerConfig.load(null, server()).get(CLUSTER)).isEqualTo("zk://127.0.0.1:2181/walden/prod");
    }

    @Test
    void aServerWithoutANameOfItsOwnIsRefused() {
        Map<String, String> flags = server();
        flags.remove("name");
        assertThatThrownBy(() -> ServerConfig.load(null, flags)).hasMessageContaining("--name");
    }

    @Test
    void aServerWithoutAReplicationAddressIsRefused() {
        Map<String, String> flags = server();
        flags.put("replication-listen", "none");
        assertThatThrownBy(() -> ServerConfig.load(null, flags)).hasMessageContaining("--replication-listen");
    }

    @Test
    void aServerThatWouldPublishAWildcardAddressIsRefused() {
        Map<String, String> flags = server();
        flags.put("replication-listen", "0.0.0.0:7401");
        assertThatThrownBy(() -> ServerConfig.load(null, flags)).hasMessageContaining("not a wildcard");
    }

    @Test
    void aClusterIsNeitherAReplicaGroupNorAReplicaOfAnotherServer() {
        Map<String, String> group = server();
        group.put("coordinator", "zk://127.0.0.1:2181/walden/g");
        assertThatThrownBy(() -> ServerConfig.load(null, group)).hasMessageContaining("excludes coordinator");
        Map<String, String> replica = server();
        replica.put("replicate-from", "127.0.0.1:7500");
        assertThatThrownBy(() -> ServerConfig.load(null, replica)).hasMessageContaining("excludes coordinator");
    }

    @Test
    void aClusterAddressThatNamesNoClusterIsRefused() {
        Map<String, String> flags = server();
        flags.put("cluster", "zk://127.0.0.1:2181/");
        assertThatThrownBy(() -> ServerConfig.load(null, flags)).isInstanceOf(IllegalArgumentException.class);
    }
}
