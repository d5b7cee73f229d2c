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
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

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
@Execution(ExecutionMode.CONCURRENT) // beside the other test classes: it mostly waits on ZooKeeper and Helix
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
                            .only(logs).statusIntervalMillis(100).start(), LAG_MILLIS, log -> Optional.empty());
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

    @Test
    void aHandOverWaitingForAReplicaHoldsBackNoOtherLogsTransition() throws Exception {
        Server a = new Server("a");
        a.placed.lead("orders"); // no replica: its hand-over waits its whole time for one to catch up
        Thread handOver = new Thread(() -> {
            try {
                a.placed.stepDown("orders", 3_000);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, "hand-over");
        handOver.start();
        waitUntil(() -> Arrays.stream(handOver.getStackTrace()).anyMatch(f -> f.getMethodName().equals("handOver")));

        a.placed.lead("payments"); // another log's transition, while orders' hand-over holds orders' lock

        assertThat(a.placed.isLed("payments")).isTrue();
        assertThat(handOver.isAlive()).as("orders' hand-over, still waiting for a replica").isTrue();
        handOver.join();
        assertThat(a.placed.isLed("orders")).isFalse();
    }

    @Test
    void theSlotOfAServerThatNoLongerHoldsACopyIsDroppedAfterTheGrace() throws Exception {
        Server a = new Server("a");
        Server b = new Server("b");
        a.placed.lead("orders");
        b.placed.follow("orders", "a");
        waitUntil(() -> a.endpoint.slots("orders").containsKey("b") && record("orders").isInSync("b"));
        b.placed.drop("orders"); // Helix moved b's copy elsewhere
        FormerReplicaSlots slots = new FormerReplicaSlots(a.placed, log -> Optional.of(Set.of("a")), 300);

        slots.check();
        assertThat(a.endpoint.slots("orders")).as("within the grace").containsKey("b");
        waitUntil(() -> {
            slots.check();
            return !a.endpoint.slots("orders").containsKey("b");
        });
    }

    @Test
    void theSlotOfAServerPlacedOnTheLogStaysWhileItIsAway() throws Exception {
        Server a = new Server("a");
        Server b = new Server("b");
        a.placed.lead("orders");
        b.placed.follow("orders", "a");
        waitUntil(() -> a.endpoint.slots("orders").containsKey("b"));
        b.placed.release("orders"); // away (restarting, say), still placed there
        FormerReplicaSlots slots = new FormerReplicaSlots(a.placed, log -> Optional.of(Set.of("a", "b")), 100);

        for (int i = 0; i < 5; i++) {
            slots.check();
            Thread.sleep(100);
        }
        assertThat(a.endpoint.slots("orders")).containsKey("b");
    }

    @Test
    void aServerThatLostItsCopyLeavesTheInSyncSetUntilItHasCaughtUpAgain() throws Exception {
        Server a = new Server("a");
        Server b = new Server("b");
        a.placed.lead("orders");
        b.placed.follow("orders", "a");
        waitUntil(() -> record("orders").isInSync("b"));
        for (int i = 0; i < 200; i++) {
            a.log("orders").append(("acknowledged " + i).getBytes(), Durability.ON);
        }
        b.close();
        deleteRecursively(work.resolve("b")); // its disk replaced, under the same name
        Server b2 = new Server("b");

        b2.placed.follow("orders", "a");

        assertThat(record("orders").inSync()).as("before its new copy received anything").containsExactly("a");
        assertThatThrownBy(() -> b2.placed.lead("orders")).isInstanceOf(LeadershipRefusedException.class);
        waitUntil(() -> record("orders").isInSync("b")); // caught up: added again by the primary
        assertThat(b2.log("orders").flushedLsn()).isGreaterThanOrEqualTo(a.log("orders").flushedLsn());
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
