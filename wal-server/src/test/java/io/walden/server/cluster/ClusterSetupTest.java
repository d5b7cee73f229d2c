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

    /** max-logs less the log default: WAGED places no more copies on the server than it would create. */
    @Test
    void aServersOwnCapacityIsWrittenAtEachJoinAndHoldsHelixToIt() throws Exception {
        try (TestingServer zk = new TestingServer(true)) {
            ClusterAddress address = ClusterAddress.parse("zk://" + zk.getConnectString() + "/walden/prod");
            ClusterSetup.prepare(address, new ServerInfo("s1", "127.0.0.1:7000", "127.0.0.1:7001"),
                    ClusterSettings.DEFAULTS.withServerCapacity(2), Duration.ofSeconds(20));
            assertThat(capacity(address, "s1")).containsEntry(ClusterSetup.CAPACITY_KEY, 2);

            ClusterSetup.prepare(address, new ServerInfo("s1", "127.0.0.1:8000", "127.0.0.1:8001"),
                    ClusterSettings.DEFAULTS.withServerCapacity(5), Duration.ofSeconds(20));
            assertThat(capacity(address, "s1")).as("restarted with another max-logs").containsEntry(ClusterSetup.CAPACITY_KEY, 5);
            HelixAdmin admin = new ZKHelixAdmin.Builder().setZkAddress(address.helixZkAddress()).build();
            try {
                assertThat(admin.getInstanceConfig(address.clusterName(), "s1").getRecord()
                        .getSimpleField(ClusterSetup.HTTP_ADDRESS)).as("its other fields stay").isEqualTo("127.0.0.1:8000");
            } finally {
                admin.close();
            }
        }
    }

    @Test
    void helixPlacesNoMoreCopiesOnAServerThanItsOwnCapacity() throws Exception {
        try (TestingServer zk = new TestingServer(true)) {
            ClusterAddress address = ClusterAddress.parse("zk://" + zk.getConnectString() + "/walden/prod");
            java.util.List<RecordingRoles.Call> history = RecordingRoles.newHistory();
            try (ClusterMember small = ClusterMember.join(address, new ServerInfo("small", "h:1", "h:2"),
                    new RecordingRoles("small", history), ClusterSettings.DEFAULTS.withServerCapacity(1));
                 ClusterMember large = ClusterMember.join(address, new ServerInfo("large", "h:3", "h:4"),
                         new RecordingRoles("large", history), ClusterSettings.DEFAULTS.withServerCapacity(3))) {
                for (String log : java.util.List.of("a", "b", "c", "d")) {
                    large.logs().add(log, 1);
                }
                long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
                while (!large.logs().placements().values().stream().allMatch(p -> p.primary().isPresent())) {
                    assertThat(System.nanoTime()).as("every log led: %s", large.logs().placements()).isLessThan(deadline);
                    Thread.sleep(20);
                }
                // four copies, room for exactly four: one on the small server, three on the large (with the
                // cluster's default capacity on both, evenness would put two on each)
                assertThat(small.logs().placements().values().stream().filter(p -> p.current().containsKey("small")))
                        .hasSize(1);
                assertThat(small.logs().placements().values().stream().filter(p -> p.current().containsKey("large")))
                        .hasSize(3);
            }
        }
    }

    private static java.util.Map<String, Integer> capacity(ClusterAddress address, String server) {
        HelixAdmin admin = new ZKHelixAdmin.Builder().setZkAddress(address.helixZkAddress()).build();
        try {
            return admin.getInstanceConfig(address.clusterName(), server).getInstanceCapacityMap();
        } finally {
            admin.close();
        }
    }
}
