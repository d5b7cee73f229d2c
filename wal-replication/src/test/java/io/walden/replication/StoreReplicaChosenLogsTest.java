package io.walden.replication;

import io.walden.core.AppendsRefusedException;
import io.walden.core.Durability;
import io.walden.core.Epoch;
import io.walden.core.Wal;
import io.walden.core.WalStore;
import io.walden.core.WalStoreConfig;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.replica.ReplicaLogs;
import io.walden.replication.replica.StoreReplicaClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.walden.core.Eventually.waitUntil;
import static io.walden.replication.Replicas.ANY_LOOPBACK_PORT;
import static io.walden.replication.Replicas.config;
import static io.walden.core.TestLogs.payloads;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A replica of chosen logs (docs/replication-protocol.md, "A replica of chosen logs"): a server that holds logs of its
 * own follows some named logs of another server, as each server of a cluster does from every other. Both sides in one
 * JVM, over real TCP on 127.0.0.1; each side's root log is its own.
 */
@Execution(ExecutionMode.CONCURRENT) // beside the other test classes: it mostly waits on its replica
@Timeout(60)
class StoreReplicaChosenLogsTest {
    @TempDir
    Path work;

    /** A server's logs: its own root log, and the named logs of its store. */
    private record Side(Wal root, WalStore store) implements AutoCloseable {
        static Side open(Path dir) {
            return new Side(Wal.open(config(dir).build()), WalStore.open(WalStoreConfig.builder(dir).writerThreads(2)
                    .defaults(b -> b.segmentSize(Replicas.SEGMENT)).build()));
        }

        Wal log(String name) {
            return store.log(name).orElseThrow();
        }

        @Override
        public void close() {
            store.close();
            root.close();
        }
    }

    private static ReplicationServer serve(Side primary) throws InterruptedException {
        return ReplicationServer.builder(primary.root()).store(primary.store(), name -> Map.of()).listen(ANY_LOOPBACK_PORT)
                .keepaliveMillis(1000).start();
    }

    private static StoreReplicaClient follow(Side replica, ReplicationServer server, String... logs) {
        return followAs("r1", replica, server, logs);
    }

    private static StoreReplicaClient followAs(String name, Side replica, ReplicationServer server, String... logs) {
        return StoreReplicaClient.builder(ReplicaLogs.of(replica.root(), replica.store(), null), server.address(), name)
                .only(List.of(logs)).statusIntervalMillis(200).start();
    }

    private static void append(Wal wal, String prefix, int count) {
        for (int i = 0; i < count; i++) {
            wal.append((prefix + " " + i).getBytes(), Durability.LOCAL);
        }
    }


    /** The replica holds log {@code name} with every record the primary flushed, readable. */
    private static void waitUntilCopied(Side primary, Side replica, String name) throws Exception {
        Wal p = primary.log(name);
        waitUntil(() -> replica.store().log(name).map(r -> r.readLimit() >= p.flushedLsn() && r.flushedLsn() >= p.flushedLsn())
                .orElse(false));
        assertThat(payloads(replica.log(name))).as("log %s", name).isEqualTo(payloads(p));
    }

    private static void waitUntilStreaming(ReplicationServer server, StoreReplicaClient client, String log) throws Exception {
        waitUntil(() -> client.isStreaming(log) && server.replicaStatus(log).stream().anyMatch(r -> r.isStreaming()));
    }

    @Test
    void aReplicaOfChosenLogsCopiesThoseOnlyAndLeavesItsOwnLogsAndItsRootLogAlone() throws Exception {
        try (Side primary = Side.open(work.resolve("p"));
             Side replica = Side.open(work.resolve("r"))) {
            append(primary.store().create("orders"), "order", 300);
            append(primary.store().create("audit"), "audit", 20);
            append(replica.store().create("mine"), "mine", 10);
            try (ReplicationServer server = serve(primary);
                 StoreReplicaClient client = follow(replica, server, "orders")) {
                waitUntilCopied(primary, replica, "orders");
                assertThat(replica.store().names()).containsExactlyInAnyOrder("orders", "mine");
                assertThat(client.logs()).containsExactly("orders");
                assertThat(client.fatalError()).as("its root log is not the primary's, and need not be").isNull();
                assertThat(server.replicaStatus("default")).as("default is not followed").isEmpty();
                replica.log("mine").append("still mine".getBytes(), Durability.LOCAL);
                replica.root().append("root is mine too".getBytes(), Durability.LOCAL);
                assertThat(payloads(replica.log("mine"))).hasSize(11);
                assertThatThrownBy(() -> replica.log("orders").append("x".getBytes(), Durability.LOCAL))
                        .isInstanceOf(AppendsRefusedException.class);
            }
        }
    }

    @Test
    void aLogChosenWhileConnectedIsCopiedAndALogLetGoKeepsItsCopyAndNoLongerCountsForCommits() throws Exception {
        try (Side primary = Side.open(work.resolve("p"));
             Side replica = Side.open(work.resolve("r"))) {
            append(primary.store().create("orders"), "order", 50);
            append(primary.store().create("audit"), "audit", 50);
            try (ReplicationServer server = serve(primary);
                 StoreReplicaClient client = follow(replica, server, "orders")) {
                waitUntilStreaming(server, client, "orders");
                client.follow("audit");
                waitUntilCopied(primary, replica, "audit");
                waitUntilStreaming(server, client, "audit");
                server.policy(SyncPolicy.parse("FIRST 1 (r1)"));
                long on = primary.log("orders").append("order on".getBytes(), Durability.ON);

                assertThat(client.unfollow("orders")).isTrue();
                waitUntil(() -> server.replicaStatus("orders").isEmpty());
                CompletableFuture<Long> waiting = primary.log("orders").appendAsync("order after".getBytes(), Durability.ON);
                long audit = primary.log("audit").append("audit on".getBytes(), Durability.ON);
                assertThat(replica.log("audit").flushedLsn()).as("audit still streams").isGreaterThan(audit);
                assertThat(waiting).as("r1 no longer answers for orders").isNotDone();
                assertThat(replica.log("orders").flushedLsn()).as("the copy of orders stays, with what it received")
                        .isGreaterThan(on);
                assertThat(client.logs()).containsExactly("audit");
                assertThatThrownBy(() -> replica.log("orders").append("x".getBytes(), Durability.LOCAL))
                        .as("let go, not promoted").isInstanceOf(AppendsRefusedException.class);

                client.follow("orders"); // chosen again: it resumes from its own end
                assertThat(waiting.get(10, TimeUnit.SECONDS)).isPositive();
                waitUntilCopied(primary, replica, "orders");
            }
        }
    }

    /**
     * A cluster drops a server's copy of a log and places it there again while another log keeps the connection to its
     * primary busy: the log is created again as a copy, on that connection (the primary's answer about who the log is
     * went to the stream of the deleted copy, and the log was never created while the connection lasted).
     */
    @Test
    void aLogLetGoDeletedAndChosenAgainIsCopiedAgainOnTheSameConnection() throws Exception {
        try (Side primary = Side.open(work.resolve("p"));
             Side replica = Side.open(work.resolve("r"))) {
            append(primary.store().create("orders"), "order", 50);
            append(primary.store().create("audit"), "audit", 50);
            try (ReplicationServer server = serve(primary);
                 StoreReplicaClient client = follow(replica, server, "orders", "audit")) {
                waitUntilCopied(primary, replica, "orders");
                waitUntilStreaming(server, client, "audit");
                assertThat(client.unfollow("orders")).isTrue();
                replica.store().delete("orders");
                append(primary.log("orders"), "order after", 10);

                client.follow("orders");

                waitUntilCopied(primary, replica, "orders");
                assertThat(payloads(replica.log("orders"))).hasSize(60);
            }
        }
    }

    @Test
    void aLogPromotedTakesAppendsInItsNextEpochWhileTheOtherLogsGoOnStreaming() throws Exception {
        try (Side primary = Side.open(work.resolve("p"));
             Side replica = Side.open(work.resolve("r"))) {
            append(primary.store().create("orders"), "order", 40);
            append(primary.store().create("audit"), "audit", 40);
            try (ReplicationServer server = serve(primary);
                 StoreReplicaClient client = follow(replica, server, "orders", "audit")) {
                waitUntilCopied(primary, replica, "orders");
                waitUntilStreaming(server, client, "audit");
                int primaryEpoch = primary.log("orders").status().epoch();

                Epoch epoch = client.promote("orders", 0);

                assertThat(epoch.number()).isGreaterThan(primaryEpoch);
                replica.log("orders").append("written on the new primary".getBytes(), Durability.LOCAL);
                assertThat(payloads(replica.log("orders"))).hasSize(41).endsWith("written on the new primary");
                assertThat(client.logs()).containsExactly("audit");
                server.policy(SyncPolicy.parse("FIRST 1 (r1)"));
                long audit = primary.log("audit").append("audit on".getBytes(), Durability.ON);
                assertThat(replica.log("audit").flushedLsn()).isGreaterThan(audit);
            }
        }
    }

    @Test
    void aLogDeletedOnThePrimaryIsKeptByAReplicaOfChosenLogs() throws Exception {
        try (Side primary = Side.open(work.resolve("p"));
             Side replica = Side.open(work.resolve("r"))) {
            append(primary.store().create("audit"), "audit", 30);
            try (ReplicationServer server = serve(primary);
                 StoreReplicaClient client = follow(replica, server, "audit")) {
                waitUntilCopied(primary, replica, "audit");
                primary.store().delete("audit");
                server.refreshLogs();
                waitUntil(() -> !client.isStreaming("audit"));
                assertThat(replica.store().names()).as("what is deleted is the caller's decision").containsExactly("audit");
                assertThat(payloads(replica.log("audit"))).hasSize(30);
                assertThat(client.logs()).containsExactly("audit");
            }
        }
    }

    @Test
    void aLogOfAnotherIdUnderAChosenNameIsRefusedForGoodNotReplaced() throws Exception {
        try (Side primary = Side.open(work.resolve("p"));
             Side replica = Side.open(work.resolve("r"))) {
            append(primary.store().create("orders"), "theirs", 5);
            append(replica.store().create("orders"), "ours", 7);
            try (ReplicationServer server = serve(primary);
                 StoreReplicaClient client = follow(replica, server, "orders")) {
                waitUntil(() -> client.fatalError("orders") != null);
                assertThat(client.fatalError("orders")).contains("another log of that name");
                assertThat(payloads(replica.log("orders"))).as("kept as it was").hasSize(7).allMatch(r -> r.startsWith("ours"));
                assertThat(Set.copyOf(replica.store().names())).containsExactly("orders");
            }
        }
    }

    @Test
    void aLogWithAPolicyOfItsOwnWaitsForItsOwnReplicasWhileTheOtherLogsTakeTheServers() throws Exception {
        try (Side primary = Side.open(work.resolve("p"));
             Side one = Side.open(work.resolve("r1"));
             Side two = Side.open(work.resolve("r2"))) {
            primary.store().create("orders");
            primary.store().create("audit");
            try (ReplicationServer server = serve(primary);
                 StoreReplicaClient r1 = followAs("r1", one, server, "orders", "audit");
                 StoreReplicaClient r2 = followAs("r2", two, server, "orders", "audit")) {
                for (String log : List.of("orders", "audit")) {
                    waitUntilStreaming(server, r1, log);
                    waitUntilStreaming(server, r2, log);
                }
                server.policy(SyncPolicy.parse("ANY 1 (r1, r2)"));
                server.logPolicy("orders", SyncPolicy.parse("FIRST 2 (r1, r2)")); // every in-sync replica of orders
                assertThat(server.logPolicy("orders")).hasToString("FIRST 2 (r1, r2)");
                assertThat(server.logPolicy("audit")).hasToString("ANY 1 (r1, r2)");

                assertThat(r2.unfollow("orders")).isTrue();
                assertThat(r2.unfollow("audit")).isTrue();
                waitUntil(() -> server.replicaStatus("orders").size() == 1 && server.replicaStatus("audit").size() == 1);
                CompletableFuture<Long> order = primary.log("orders").appendAsync("order".getBytes(), Durability.ON);
                long audit = primary.log("audit").append("audit".getBytes(), Durability.ON);
                assertThat(one.log("audit").flushedLsn()).as("audit: r1 is enough").isGreaterThan(audit);
                assertThat(order).as("orders waits for r2 too").isNotDone();

                server.policy(SyncPolicy.parse("FIRST 1 (r1)")); // the server's policy changes: orders keeps its own
                assertThat(server.logPolicy("orders")).hasToString("FIRST 2 (r1, r2)");
                r2.follow("orders");
                assertThat(order.get(10, TimeUnit.SECONDS)).as("released once r2 holds it").isPositive();
                assertThat(two.log("orders").flushedLsn()).isGreaterThan(order.get());

                server.inheritPolicy("orders");
                assertThat(server.logPolicy("orders")).hasToString("FIRST 1 (r1)");
                server.logPolicy("orders", null); // an in-sync set of the primary alone: nothing to wait for
                assertThat(r1.unfollow("orders")).isTrue();
                assertThat(primary.log("orders").append("alone".getBytes(), Durability.ON)).isPositive();
            }
        }
    }
}
