package io.walden.server.cluster;

import io.walden.core.AppendsRefusedException;
import io.walden.core.Durability;
import io.walden.core.RemoteCommitUnconfirmedException;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.WalStore;
import io.walden.core.WalStoreConfig;
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
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.walden.core.Eventually.waitUntil;
import static io.walden.core.TestLogs.payloads;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The data work of a cluster's transitions (docs/cluster.md), driven by hand as Helix would drive it: servers in one
 * JVM, each with its own store and replication endpoint on real TCP, and their logs' leadership records in a real
 * ZooKeeper.
 */
@Timeout(60)
class PlacedLogsTest {
    private static final long LAG_MILLIS = 2000; // long enough for a replica to connect on a loaded machine

    @TempDir
    Path work;
    private TestingServer zk;
    private CuratorFramework client;
    private final Map<String, InetSocketAddress> addresses = new ConcurrentHashMap<>();
    private final List<Server> servers = new ArrayList<>();

    /** One server of the cluster: its root log, store, replication endpoint and placed logs. */
    private final class Server implements AutoCloseable {
        final Wal root;
        final WalStore store;
        final ReplicationServer endpoint;
        final PlacedLogs placed;

        Server(String name) throws InterruptedException {
            Path dir = work.resolve(name);
            root = Wal.open(WalConfig.builder(dir).segmentSize(1 << 20).build());
            store = WalStore.open(WalStoreConfig.builder(dir).writerThreads(2).defaults(b -> b.segmentSize(1 << 20)).build());
            endpoint = ReplicationServer.builder(root).store(store, log -> Map.of())
                    .listen(new InetSocketAddress("127.0.0.1", 0)).keepaliveMillis(500).start();
            addresses.put(name, endpoint.address());
            placed = new PlacedLogs(name, held(store), endpoint, new LogLeadership(client, "/walden/test"), addresses::get,
                    (primary, logs) -> StoreReplicaClient.builder(ReplicaLogs.of(root, store, null), primary, name)
                            .only(logs).statusIntervalMillis(100).start(), LAG_MILLIS);
            servers.add(this);
        }

        Wal log(String name) {
            return store.log(name).orElseThrow();
        }

        @Override
        public void close() {
            if (servers.remove(this)) {
                placed.close();
                endpoint.close();
                store.close();
                root.close();
            }
        }
    }

    /** A bare store's logs, as a cluster server's catalog holds them. */
    static HeldLogs held(WalStore store) {
        return new HeldLogs() {
            @Override
            public Set<String> names() {
                return store.names();
            }

            @Override
            public Optional<Wal> log(String name) {
                return store.log(name);
            }

            @Override
            public Wal create(String name) {
                return store.create(name);
            }

            @Override
            public void delete(String name) {
                store.delete(name);
            }
        };
    }

    @BeforeEach
    void startZooKeeper() throws Exception {
        zk = new TestingServer(true);
        client = CuratorFrameworkFactory.newClient(zk.getConnectString(), new RetryOneTime(100));
        client.start();
    }

    @AfterEach
    void stop() throws Exception {
        for (Server s : new ArrayList<>(servers)) {
            s.close();
        }
        client.close();
        zk.close();
    }

    private LeadershipRecord record(String log) throws Exception {
        return new LogLeadership(client, "/walden/test").read(log);
    }


    @Test
    void aNewLogIsLedWhereItIsClaimedAndItsReplicasJoinTheInSyncSetOnceCaughtUp() throws Exception {
        Server a = new Server("a");
        Server b = new Server("b");
        Server c = new Server("c");
        a.placed.lead("orders");
        for (int i = 0; i < 100; i++) {
            a.log("orders").append(("before " + i).getBytes(), Durability.LOCAL);
        }
        assertThat(record("orders").inSync()).containsExactly("a");

        b.placed.follow("orders", "a");
        c.placed.follow("orders", "a");
        waitUntil(() -> record("orders").inSync().size() == 3);

        long lsn = a.log("orders").append("on".getBytes(), Durability.ON);
        assertThat(b.log("orders").flushedLsn()).as("every in-sync replica is waited for").isGreaterThan(lsn);
        assertThat(c.log("orders").flushedLsn()).isGreaterThan(lsn);
        assertThat(record("orders").primary()).isEqualTo("a");
        assertThat(b.placed.followed()).isEqualTo(Map.of("a", Set.of("orders")));
    }

    @Test
    void whenThePrimaryIsLostAnInSyncReplicaLeadsWithEveryAcknowledgedRecord() throws Exception {
        Server a = new Server("a");
        Server b = new Server("b");
        Server c = new Server("c");
        int first = a.placed.lead("orders").epoch().number();
        b.placed.follow("orders", "a");
        c.placed.follow("orders", "a");
        waitUntil(() -> record("orders").inSync().size() == 3);
        List<String> acknowledged = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            a.log("orders").append(("order " + i).getBytes(), Durability.ON);
            acknowledged.add("order " + i);
        }

        a.close(); // lost
        b.placed.lead("orders");
        c.placed.follow("orders", "b");

        assertThat(record("orders").primary()).isEqualTo("b");
        assertThat(record("orders").epoch()).isGreaterThan(first).isEqualTo(b.log("orders").status().epoch());
        assertThat(payloads(b.log("orders"))).containsAll(acknowledged);
        long lsn = b.log("orders").append("after the failover".getBytes(), Durability.ON); // once a is dropped
        assertThat(c.log("orders").flushedLsn()).isGreaterThan(lsn);
        waitUntil(() -> record("orders").inSync().equals(Set.of("b", "c")));
        assertThat(payloads(c.log("orders"))).containsAll(acknowledged);
    }

    @Test
    void aDeposedPrimaryAcknowledgesNothingMoreAndTakesNoAppends() throws Exception {
        Server a = new Server("a");
        Server b = new Server("b");
        a.placed.lead("orders");
        b.placed.follow("orders", "a");
        waitUntil(() -> record("orders").inSync().size() == 2);

        b.placed.lead("orders"); // a is still up: cut off from ZooKeeper, say, while Helix moved the log
        CompletableFuture<Long> late = a.log("orders").appendAsync("to the old primary".getBytes(), Durability.ON);

        assertThatThrownBy(() -> late.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(RemoteCommitUnconfirmedException.class);
        assertThatThrownBy(() -> a.log("orders").append("again".getBytes(), Durability.LOCAL))
                .isInstanceOf(AppendsRefusedException.class);
        assertThat(payloads(b.log("orders"))).doesNotContain("to the old primary");
        assertThat(record("orders").primary()).isEqualTo("b");
    }

    @Test
    void aServerWithoutACopyOfALogLedBeforeIsRefusedIt() throws Exception {
        Server a = new Server("a");
        Server d = new Server("d");
        a.placed.lead("orders");

        assertThatThrownBy(() -> d.placed.lead("orders")).isInstanceOf(LeadershipRefusedException.class);
        assertThat(d.store.names()).doesNotContain("orders");
        assertThat(record("orders").primary()).isEqualTo("a");
    }

    @Test
    void aFormerPrimaryFollowsTheNewOneAndDropsWhatWasNeverAcknowledged() throws Exception {
        Server a = new Server("a");
        Server b = new Server("b");
        a.placed.lead("orders");
        b.placed.follow("orders", "a");
        waitUntil(() -> record("orders").inSync().size() == 2);
        a.log("orders").append("acknowledged".getBytes(), Durability.ON);

        b.placed.lead("orders");
        b.log("orders").append("from b".getBytes(), Durability.LOCAL);
        a.placed.follow("orders", "b");

        waitUntil(() -> payloads(a.log("orders")).contains("from b"));
        assertThat(payloads(a.log("orders"))).isEqualTo(payloads(b.log("orders")));
        assertThatThrownBy(() -> a.log("orders").append("x".getBytes(), Durability.LOCAL))
                .isInstanceOf(AppendsRefusedException.class);
    }

    @Test
    void aServerThatRestartsTakesNoAppendsOnItsLogsUntilItClaimsThemAgain() throws Exception {
        Server a = new Server("a");
        a.placed.lead("orders");
        a.log("orders").append("before the restart".getBytes(), Durability.LOCAL);
        a.close();

        Server again = new Server("a");
        assertThatThrownBy(() -> again.log("orders").append("x".getBytes(), Durability.LOCAL))
                .isInstanceOf(AppendsRefusedException.class);
        again.placed.lead("orders");
        again.log("orders").append("after the claim".getBytes(), Durability.ON);

        assertThat(payloads(again.log("orders"))).containsExactly("before the restart", "after the claim");
    }
}
