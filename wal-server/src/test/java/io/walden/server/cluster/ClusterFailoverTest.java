package io.walden.server.cluster;

import io.walden.core.AppendsRefusedException;
import io.walden.core.Durability;
import io.walden.core.RemoteCommitUnconfirmedException;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.WalStore;
import io.walden.core.WalStoreConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.replica.ReplicaLogs;
import io.walden.replication.replica.StoreReplicaClient;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.walden.core.Eventually.waitUntil;
import static io.walden.core.TestLogs.payloads;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Helix's placement and Walden's data work together (docs/cluster.md): three servers in one JVM, each with its own store,
 * replication endpoint on real TCP, {@link PlacedLogs}, {@link ClusterRoles} and Helix member, on a real ZooKeeper.
 * Helix places a log; its primary, chosen by Helix and claimed in the log's record, takes appends acknowledged by its
 * in-sync replica; when that server goes, Helix promotes the replica, which leads with every acknowledged record.
 */
@Timeout(60)
@Execution(ExecutionMode.CONCURRENT) // beside the other test classes: it mostly waits on ZooKeeper and Helix
class ClusterFailoverTest {
    private static final AtomicInteger CLUSTERS = new AtomicInteger();
    @TempDir
    Path work;
    private TestingServer zk;
    private ClusterAddress address;
    private final Map<String, Node> nodes = new TreeMap<>();
    /** Every node started, closed ones too: their meters are read at the end. */
    private final List<Node> everNode = new ArrayList<>();

    /** One server of the cluster. */
    private final class Node implements AutoCloseable {
        final String name;
        final Wal root;
        final WalStore store;
        final ReplicationServer endpoint;
        final CuratorFramework zkClient;
        final PlacedLogs placed;
        final ClusterRoles roles;
        final ClusterMember member;
        final SimpleMeterRegistry meters = new SimpleMeterRegistry();

        Node(String name) throws Exception {
            this.name = name;
            Path dir = work.resolve(name);
            root = Wal.open(WalConfig.builder(dir).segmentSize(1 << 20).build());
            store = WalStore.open(WalStoreConfig.builder(dir).writerThreads(2).defaults(b -> b.segmentSize(1 << 20)).build());
            endpoint = ReplicationServer.builder(root).store(store, log -> Map.of())
                    .listen(new InetSocketAddress("127.0.0.1", 0)).keepaliveMillis(500).start();
            zkClient = CuratorFrameworkFactory.newClient(zk.getConnectString(), new RetryOneTime(100));
            zkClient.start();
            placed = new PlacedLogs(name, PlacedLogsTest.held(store), endpoint,
                    new LogLeadership(zkClient, address.clusterPath() + "/PROPERTYSTORE/walden"), this::replicationAddressOf,
                    (primary, logs) -> StoreReplicaClient.builder(ReplicaLogs.of(root, store, null), primary, name)
                            .only(logs).statusIntervalMillis(100).start(), 2000, log -> Optional.empty());
            roles = new ClusterRoles(placed, new ClusterMeters(meters, placed));
            member = ClusterMember.join(address, new ServerInfo(name, "127.0.0.1:1", "127.0.0.1:"
                    + endpoint.address().getPort()), roles, ClusterSettings.DEFAULTS);
            nodes.put(name, this);
            everNode.add(this);
        }

        private InetSocketAddress replicationAddressOf(String server) {
            return member.logs().summary().servers().stream().filter(s -> s.name().equals(server)).findFirst()
                    .map(s -> {
                        String[] hostPort = s.replicationAddress().split(":");
                        return new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1]));
                    }).orElseThrow(() -> new IllegalStateException("no server " + server + " in the cluster"));
        }

        Wal log(String log) {
            return store.log(log).orElseThrow();
        }

        @Override
        public void close() {
            if (nodes.remove(name) == null) {
                return;
            }
            member.close(); // first: Helix sees it gone at once, as when its process dies
            roles.close();
            placed.close();
            endpoint.close();
            store.close();
            root.close();
            zkClient.close();
        }
    }

    @BeforeEach
    void startZooKeeper() throws Exception {
        zk = new TestingServer(true);
        // A name of its own, as this class's tests run side by side: in-process clusters of one name disturbed each
        // other's placements (see InProcessCluster's name).
        address = ClusterAddress.parse("zk://" + zk.getConnectString() + "/walden/failover" + CLUSTERS.incrementAndGet());
    }

    @AfterEach
    void stop() throws Exception {
        for (Node n : new ArrayList<>(nodes.values())) {
            n.close();
        }
        zk.close();
    }

    private LeadershipRecord record(String log) throws Exception {
        return nodes.values().iterator().next().placed.leadership().read(log);
    }

    /** The server leading {@code log}: the one its record names, once that server takes appends. */
    private Node leaderOf(String log) throws Exception {
        waitUntil(() -> {
            LeadershipRecord r = record(log);
            return !r.isNone() && nodes.containsKey(r.primary()) && nodes.get(r.primary()).placed.led().containsKey(log);
        });
        return nodes.get(record(log).primary());
    }

    /**
     * The leader once Helix settled: WAGED hands a log over once more after it placed a new copy (docs/cluster.md, "The
     * rebalancer").
     */
    private Node settledLeaderOf(String log) throws Exception {
        Node any = nodes.values().iterator().next();
        waitUntil(() -> {
            Placement placement = any.member.logs().placement(log).orElse(null);
            return placement != null && placement.settled()
                    && placement.primary().orElse("").equals(record(log).primary());
        });
        return leaderOf(log);
    }

    /**
     * Appends at {@code on} at the log's leader, as a client of a cluster does while Helix moves the log: an append
     * refused (the log moved) or not confirmed (its primary handed it over meanwhile; it may be there) is sent again.
     */
    private void appendAtItsLeader(String log, String payload) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                leaderOf(log).log(log).append(payload.getBytes(), Durability.ON);
                return;
            } catch (AppendsRefusedException | RemoteCommitUnconfirmedException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(50);
            }
        }
    }

    @Test
    void aLogPlacedByHelixFailsOverToItsInSyncReplicaWithEveryAcknowledgedRecord() throws Exception {
        new Node("s1");
        new Node("s2");
        new Node("s3");
        long added = System.nanoTime();
        nodes.get("s1").member.logs().add("orders", 2);
        leaderOf("orders");
        long ledMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - added);
        System.out.printf("ClusterFailoverTest: log orders led %d ms after it was added%n", ledMs);
        // its copies became replicas without waiting for a primary to stream from (there is none before the first)
        assertThat(ledMs).as("led before a replica's wait for a stream ran out").isLessThan(ClusterRoles.HANDOVER_MILLIS);
        waitUntil(() -> record("orders").inSync().size() == 2);
        settledLeaderOf("orders");
        List<String> acknowledged = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            appendAtItsLeader("orders", "order " + i);
            acknowledged.add("order " + i);
        }
        Node first = leaderOf("orders");
        String replica = record("orders").inSync().stream().filter(n -> !n.equals(first.name)).findFirst().orElseThrow();

        first.close(); // the primary's server is lost

        waitUntil(() -> !first.name.equals(record("orders").primary()));
        Node next = settledLeaderOf("orders");
        assertThat(record("orders").epoch()).isGreaterThan(1);
        List<String> held = payloads(next.log("orders"));
        assertThat(held).as("every acknowledged record, on %s (the in-sync replica was %s)", next.name, replica)
                .containsAll(acknowledged);
        appendAtItsLeader("orders", "after the failover"); // once the lost server is dropped from the in-sync set
        waitUntil(() -> record("orders").inSync().size() == 2 && !record("orders").inSync().contains(first.name));
    }

    @Test
    void onlyALeadTakenFromAPrimaryThatDidNotStepDownCountsAsAFailover() throws Exception {
        new Node("s1");
        new Node("s2");
        new Node("s3");
        nodes.get("s1").member.logs().add("orders", 2);
        waitUntil(() -> record("orders").inSync().size() == 2);
        Node first = settledLeaderOf("orders");
        appendAtItsLeader("orders", "before");
        assertThat(count("walden.cluster.failovers")).as("a new log, then any planned hand-overs").isZero();
        assertThat(count("walden.cluster.placements", "role", "replica")).isGreaterThanOrEqualTo(2);

        first.close(); // its session ends without a hand-over, as when its process dies

        waitUntil(() -> !first.name.equals(record("orders").primary()));
        settledLeaderOf("orders");
        appendAtItsLeader("orders", "after");
        assertThat(count("walden.cluster.failovers")).isEqualTo(1);
        assertThat(count("walden.cluster.placements", "role", "primary")).as("the first lead, the failover")
                .isGreaterThanOrEqualTo(2);
    }

    /** The counter summed over every node started in the test. */
    private double count(String name, String... tags) {
        return everNode.stream().mapToDouble(n -> n.meters.get(name).tags(tags).counter().count()).sum();
    }
}
