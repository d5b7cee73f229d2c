package io.walden.server.cluster;

import org.apache.curator.test.TestingServer;
import org.apache.helix.HelixAdmin;
import org.apache.helix.manager.zk.ZKHelixAdmin;
import org.apache.helix.model.InstanceConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** ClusterSetup on a real ZooKeeper: what a server's join writes into the Helix cluster. */
@Timeout(60)
class ClusterSetupTest {
    /** A server killed and started again comes back under its name, maybe on other ports: it must be able to join. */
    @Test
    void aServerRegisteredAgainUnderItsNameTakesItsNewAddresses() throws Exception {
        try (TestingServer zk = new TestingServer(true)) {
            ClusterAddress address = ClusterAddress.parse("zk://" + zk.getConnectString() + "/walden/prod");
            ClusterSetup.prepare(address, new ServerInfo("s1", "127.0.0.1:7000", "127.0.0.1:7001"), ClusterSettings.DEFAULTS,
                    Duration.ofSeconds(20));

            ClusterSetup.prepare(address, new ServerInfo("s1", "127.0.0.1:8000", "127.0.0.1:8001"), ClusterSettings.DEFAULTS,
                    Duration.ofSeconds(20));

            HelixAdmin admin = new ZKHelixAdmin.Builder().setZkAddress(address.helixZkAddress()).build();
            try {
                assertThat(admin.getInstancesInCluster(address.clusterName())).containsExactly("s1");
                InstanceConfig config = admin.getInstanceConfig(address.clusterName(), "s1");
                assertThat(config.getRecord().getSimpleField(ClusterSetup.HTTP_ADDRESS)).isEqualTo("127.0.0.1:8000");
                assertThat(config.getRecord().getSimpleField(ClusterSetup.REPLICATION_ADDRESS)).isEqualTo("127.0.0.1:8001");
                assertThat(config.getInstanceEnabled()).isTrue();
            } finally {
                admin.close();
            }
        }
    }
}
