package io.walden.replication;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.walden.core.AppendsRefusedException;
import io.walden.core.Durability;
import io.walden.core.Epoch;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.WalStore;
import io.walden.core.WalStoreConfig;
import io.walden.core.internal.sync.SyncOverride;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.protocol.FrameDescriptor;
import io.walden.replication.replica.PrimaryIdentity;
import io.walden.replication.replica.ReplicaClient;
import io.walden.replication.replica.ReplicaLogs;
import io.walden.replication.replica.StoreReplicaClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Function;

import static io.walden.core.Eventually.waitUntil;
import static io.walden.replication.Replicas.ANY_LOOPBACK_PORT;
import static io.walden.replication.Replicas.config;
import static io.walden.core.TestLogs.payloads;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A primary's root log and store replicated over one connection (protocol version 6: docs/replication-protocol.md,
 * "Version 6"), both sides in one JVM, over real TCP on 127.0.0.1.
 */
@Execution(ExecutionMode.CONCURRENT) // beside the other test classes: it mostly waits on its replicas
@Timeout(60)
class StoreReplicationTest {
    @TempDir
    Path work;

    /** A server's logs: the root log at the directory and the store's named logs under logs/. */
    private record Side(Wal root, WalStore store) implements AutoCloseable {
        static Side primary(Path dir) {
            return new Side(Wal.open(config(dir).build()), store(dir, (name, b) -> { }));
        }

        /** A new replica's: its root log a copy of the primary's. */
        static Side replica(Path dir, ReplicationServer primary, BiConsumer<String, WalConfig.Builder> logSettings)
                throws InterruptedException {
            PrimaryIdentity id = PrimaryIdentity.fetch(primary.address(), "r1", null, null, 10_000);
            return new Side(id.openReplicaLog(config(dir)), store(dir, logSettings));
        }

        static WalStore store(Path dir, BiConsumer<String, WalConfig.Builder> logSettings) {
            return WalStore.open(WalStoreConfig.builder(dir).writerThreads(2).defaults(b -> b.segmentSize(Replicas.SEGMENT))
                    .logSettings(logSettings).build());
        }

        Wal log(String name) {
            return name.equals(FrameDescriptor.DEFAULT_LOG) ? root : store.log(name).orElseThrow();
        }

        Set<String> names() {
            Set<String> all = new TreeSet<>(store.names());
            all.add(FrameDescriptor.DEFAULT_LOG);
            return all;
        }

        ReplicaLogs logs() {
            return ReplicaLogs.of(root, store, null);
        }

        /** Its logs, each taking the primary's retention time ({@link #toldRetention}) when it is told it. */
        ReplicaLogs takingRetention() {
            return ReplicaLogs.of(root, store, (told, b) -> {
                if (told.containsKey("retention-time")) {
                    b.retentionTime(Duration.parse(told.get("retention-time")));
                }
            });
        }

        @Override
        public void close() {
            store.close();
            root.close();
        }
    }

    private static ReplicationServer serve(Side primary) throws InterruptedException {
        return ReplicationServer.builder(primary.root()).store(primary.store(), name -> Map.of("segment-size",
                        Long.toString(Replicas.SEGMENT))).listen(ANY_LOOPBACK_PORT).keepaliveMillis(1000).start();
    }

    private static StoreReplicaClient follow(Side replica, ReplicationServer server) {
        return StoreReplicaClient.builder(replica.logs(), server.address(), "r1").statusIntervalMillis(200).start();
    }

    /** A primary that tells its replicas each log's retention time, as a server tells the settings a PATCH changes. */
    private static ReplicationServer serveTellingRetention(Side primary) throws InterruptedException {
        Function<String, Map<String, String>> told = name -> {
            Duration retention = primary.log(name).config().retentionTime();
            return retention == null ? Map.of() : Map.of("retention-time", retention.toString());
        };
        return ReplicationServer.builder(primary.root()).store(primary.store(), told).listen(ANY_LOOPBACK_PORT)
                .keepaliveMillis(1000).start();
    }

    /** A replica taking the primary's retention times, through {@code link}. */
    private static StoreReplicaClient followTakingRetention(Side replica, InetSocketAddress link) {
        return StoreReplicaClient.builder(replica.takingRetention(), link, "r1").statusIntervalMillis(200).start();
    }

    /** Log {@code name}'s settings change on the primary, as a PATCH does: the log reopens with them, and is served anew. */
    private static void changeRetention(Side primary, ReplicationServer server, String name, Duration retention) {
        primary.store().reconfigure(name, b -> b.retentionTime(retention));
        server.refreshLogs();
    }

    /** A replica store's settings: log {@code log} forces through {@code gate}, so that a test can hold its disk. */
    private static BiConsumer<String, WalConfig.Builder> forcesThrough(String log, GatedSync gate) {
        return (name, b) -> {
            if (name.equals(log)) {
                SyncOverride.set(b, gate);
            }
        };
    }

    /** Both sides stream each of {@code logs}, and the replica caught up with each (it counts for the policy). */
    private static void waitUntilStreaming(ReplicationServer server, StoreReplicaClient client, String... logs)
            throws Exception {
        for (String log : logs) {
            waitUntil(() -> client.isStreaming(log) && server.replicaStatus(log).stream().anyMatch(r -> r.isStreaming()));
        }
    }


    private static void append(Wal wal, String prefix, int count) {
        for (int i = 0; i < count; i++) {
            wal.append((prefix + " " + i + " " + "x".repeat(i % 300)).getBytes(), Durability.LOCAL);
        }
    }

    /** Every log of the primary is on the replica with the same records, and no other log is. */
    private static void waitUntilSame(Side primary, Side replica) throws Exception {
        waitUntil(() -> replica.names().equals(primary.names()));
        for (String name : primary.names()) {
            Wal p = primary.log(name);
            // A replica's readers see what its primary reported flushed: the read limit (never unlimited on a replica).
            waitUntil(() -> {
                Wal r = name.equals(FrameDescriptor.DEFAULT_LOG) ? replica.root() : replica.store().log(name).orElse(null);
                return r != null && r.flushedLsn() >= p.flushedLsn() && r.readLimit() >= p.flushedLsn()
                        && r.readLimit() != Long.MAX_VALUE;
            });
            assertThat(payloads(replica.log(name))).as("log %s", name).isEqualTo(payloads(p));
        }
    }

    @Test
    void aReplicaOfAPrimaryWithThreeLogsEndsWithTheSameRecordsInEachOverOneConnection() throws Exception {
        try (Side primary = Side.primary(work.resolve("p"))) {
            primary.store().create("orders");
            primary.store().create("audit");
            append(primary.root(), "root", 200);
            append(primary.log("orders"), "order", 800); // several segments
            append(primary.log("audit"), "audit", 50);
            try (ReplicationServer server = serve(primary);
                 Side replica = Side.replica(work.resolve("r"), server, (n, b) -> { });
                 StoreReplicaClient client = follow(replica, server)) {
                waitUntilSame(primary, replica);
                append(primary.log("orders"), "more", 100); // streamed as it comes, too
                waitUntilSame(primary, replica);
                assertThat(client.logs()).containsExactly("audit", "default", "orders");
                assertThat(client.isConnected()).isTrue();
                waitUntil(() -> client.appliedLsn("orders") == primary.log("orders").flushedLsn());
                assertThat(client.rewinds()).isZero();
                assertThat(server.slots("orders")).containsKey("r1");
                assertThat(server.slots("audit")).containsKey("r1");
                assertThat(server.replicaStatus("orders")).singleElement().satisfies(r -> assertThat(r.name()).isEqualTo("r1"));
                assertThat(replica.log("orders").status().logId()).isEqualTo(primary.log("orders").status().logId());
            }
        }
    }

    @Test
    void commitsAtOnOnTwoLogsAreEachReleasedByTheirOwnLogsFlushOnTheReplica() throws Exception {
        GatedSync auditDisk = new GatedSync();
        try (Side primary = Side.primary(work.resolve("p"))) {
            primary.store().create("orders");
            primary.store().create("audit");
            try (ReplicationServer server = serve(primary);
                 Side replica = Side.replica(work.resolve("r"), server, forcesThrough("audit", auditDisk));
                 StoreReplicaClient client = follow(replica, server)) {
                waitUntilStreaming(server, client, "orders", "audit");
                server.policy(SyncPolicy.parse("FIRST 1 (r1)"));
                long order = primary.log("orders").append("order 1".getBytes(), Durability.ON);
                assertThat(replica.log("orders").flushedLsn()).as("ON on orders: flushed by the replica's orders")
                        .isGreaterThan(order);
                long audit = primary.log("audit").append("audit 1".getBytes(), Durability.ON);
                assertThat(replica.log("audit").flushedLsn()).isGreaterThan(audit);

                auditDisk.close(); // the replica's audit log can no longer force
                CompletableFuture<Long> held = primary.log("audit").appendAsync("audit 2".getBytes(), Durability.ON);
                for (int i = 0; i < 20; i++) {
                    long lsn = primary.log("orders").append(("order while audit waits " + i).getBytes(), Durability.ON);
                    assertThat(replica.log("orders").flushedLsn()).isGreaterThan(lsn);
                }
                assertThat(held).as("audit's ON commit waits for audit's flush on the replica, whatever orders does").isNotDone();
                auditDisk.open();
                long released = held.get(10, TimeUnit.SECONDS);
                assertThat(replica.log("audit").flushedLsn()).isGreaterThan(released);
            } finally {
                auditDisk.open();
            }
        }
    }

    @Test
    void aReplicaTakesALogCreatedAndDropsALogDeletedWhileItIsConnected() throws Exception {
        try (Side primary = Side.primary(work.resolve("p"))) {
            primary.store().create("orders");
            append(primary.log("orders"), "order", 50);
            try (ReplicationServer server = serve(primary);
                 Side replica = Side.replica(work.resolve("r"), server, (n, b) -> { });
                 StoreReplicaClient client = follow(replica, server)) {
                waitUntilSame(primary, replica);
                append(primary.store().create("events"), "event", 100);
                server.refreshLogs();
                waitUntilSame(primary, replica);
                assertThat(server.logs()).containsExactly("default", "events", "orders");

                primary.store().delete("orders");
                server.refreshLogs();
                waitUntil(() -> !replica.store().names().contains("orders"));
                waitUntilSame(primary, replica);
                assertThat(client.logs()).containsExactly("default", "events");
            }
        }
    }

    @Test
    void everyLogsReplicaMetersCarryItsNameAndGoWhenTheLogIsDeleted() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Side primary = Side.primary(work.resolve("p"))) {
            primary.store().create("orders");
            try (ReplicationServer server = serve(primary);
                 Side replica = Side.replica(work.resolve("r"), server, (n, b) -> { });
                 StoreReplicaClient client = follow(replica, server)) {
                waitUntilStreaming(server, client, "default", "orders");
                server.meterBinder().bindTo(registry); // bound with replicas already streaming: theirs are registered
                append(primary.store().create("events"), "event", 10); // a log created later: registered on connect
                server.refreshLogs();
                waitUntilStreaming(server, client, "events");
                append(primary.log("orders"), "order", 10);
                for (String log : List.of("default", "orders", "events")) {
                    waitUntil(() -> registry.find("walden.replica.lsn").tags("log", log, "replica", "r1", "position", "flush")
                            .gauge() != null);
                }
                waitUntil(() -> registry.find("walden.replica.lsn").tags("log", "orders", "position", "flush").gauge()
                        .value() == primary.log("orders").flushedLsn());
                waitUntil(() -> registry.find("walden.replica.lag").tags("replica", "r1", "position", "flush").timer() != null);

                primary.store().delete("orders");
                server.refreshLogs();
                waitUntil(() -> registry.find("walden.replica.lsn").tag("log", "orders").meters().isEmpty()
                        && registry.find("walden.replica.waiting").tag("log", "orders").meters().isEmpty());
                assertThat(registry.find("walden.replica.lsn").tag("log", "events").meters()).hasSize(3);
                assertThat(registry.find("walden.replica.lag").tag("replica", "r1").meters())
                        .as("the replica's lag, over every log it streams, while it streams any").isNotEmpty();
            }
        }
    }

    @Test
    void aReplicaThatWasDownCatchesUpToExactlyThePrimarysSetOfLogs() throws Exception {
        try (Side primary = Side.primary(work.resolve("p"))) {
            primary.store().create("orders");
            primary.store().create("audit");
            primary.store().create("kept");
            append(primary.log("orders"), "order", 50);
            append(primary.log("kept"), "kept", 50);
            try (ReplicationServer server = serve(primary);
                 Side replica = Side.replica(work.resolve("r"), server, (n, b) -> { })) {
                try (StoreReplicaClient client = follow(replica, server)) {
                    waitUntilSame(primary, replica);
                }
                long auditId = primary.log("audit").status().logId();
                primary.store().delete("orders");
                primary.store().delete("audit");
                append(primary.store().create("audit"), "new audit", 30); // the same name, another log
                append(primary.store().create("late"), "late", 80);
                append(primary.log("kept"), "kept more", 20);
                server.refreshLogs();
                try (StoreReplicaClient client = follow(replica, server)) {
                    waitUntilSame(primary, replica);
                    assertThat(replica.names()).containsExactly("audit", "default", "kept", "late");
                    assertThat(replica.log("audit").status().logId()).isNotEqualTo(auditId)
                            .isEqualTo(primary.log("audit").status().logId());
                }
            }
        }
    }

    @Test
    void aVersion5ReplicaOfAStorePrimaryFollowsTheDefaultLogAlone() throws Exception {
        try (Side primary = Side.primary(work.resolve("p"))) {
            primary.store().create("orders");
            append(primary.root(), "root", 20);
            append(primary.log("orders"), "order", 20);
            try (ReplicationServer server = serve(primary)) {
                PrimaryIdentity id = PrimaryIdentity.fetch(server.address(), "old", null, null, 10_000);
                try (Wal old = id.openReplicaLog(config(work.resolve("old")));
                     ReplicaClient client = Replicas.follow(old, server, "old")) {
                    waitUntil(() -> old.readLimit() >= primary.root().flushedLsn() && old.readLimit() != Long.MAX_VALUE
                            && old.flushedLsn() >= primary.root().flushedLsn());
                    assertThat(payloads(old)).isEqualTo(payloads(primary.root()));
                    assertThat(server.replicaStatus()).singleElement().satisfies(r -> assertThat(r.name()).isEqualTo("old"));
                    assertThat(server.replicaStatus("orders")).as("a version 5 replica gets the log default only").isEmpty();
                }
            }
        }
    }

    @Test
    void aPromotionMakesEveryLogOfTheReplicaAPrimaryTogetherWithWhatItReceived() throws Exception {
        try (Side primary = Side.primary(work.resolve("p"))) {
            primary.store().create("orders");
            append(primary.root(), "root", 30);
            append(primary.log("orders"), "order", 30);
            try (ReplicationServer server = serve(primary);
                 Side replica = Side.replica(work.resolve("r"), server, (n, b) -> { });
                 StoreReplicaClient client = follow(replica, server)) {
                waitUntilSame(primary, replica);
                assertThatThrownBy(() -> replica.log("orders").append(new byte[1], Durability.LOCAL))
                        .isInstanceOf(AppendsRefusedException.class);
                Map<String, Epoch> epochs = client.promote(0);
                assertThat(epochs.keySet()).containsExactly("default", "orders");
                for (String name : epochs.keySet()) {
                    assertThat(epochs.get(name).number()).isGreaterThan(primary.log(name).status().epoch());
                    long lsn = replica.log(name).append(("after " + name).getBytes(), Durability.LOCAL);
                    assertThat(lsn).isGreaterThanOrEqualTo(primary.log(name).insertLsn());
                    assertThat(payloads(replica.log(name))).startsWith(payloads(primary.log(name)).toArray(String[]::new));
                }
            }
        }
    }

    @Test
    void aLogWhoseReplicaCannotKeepUpHasOnlyItsWindowInFlightAndTheOtherLogsCommitsGoOn() throws Exception {
        GatedSync busyDisk = new GatedSync();
        try (Side primary = Side.primary(work.resolve("p"))) {
            primary.store().create("busy");
            primary.store().create("orders");
            try (ReplicationServer server = serve(primary);
                 Side replica = Side.replica(work.resolve("r"), server, forcesThrough("busy", busyDisk));
                 StoreReplicaClient client = follow(replica, server)) {
                try {
                    waitUntilStreaming(server, client, "orders", "busy");
                    server.policy(SyncPolicy.parse("FIRST 1 (r1)"));
                    busyDisk.close(); // the replica's busy log is stuck in its first force from here on
                    byte[] payload = new byte[30_000];
                    long target = primary.log("busy").insertLsn() + 2 * FrameDescriptor.STREAM_WINDOW;
                    while (primary.log("busy").insertLsn() < target) {
                        primary.log("busy").append(payload, Durability.LOCAL);
                    }
                    waitUntil(() -> server.replicaStatus("busy").get(0).sentLsn() > FrameDescriptor.STREAM_WINDOW / 2);
                    for (int i = 0; i < 20; i++) {
                        long lsn = primary.log("orders").append(("order " + i).getBytes(), Durability.ON);
                        assertThat(replica.log("orders").flushedLsn()).isGreaterThan(lsn);
                    }
                    var busy = server.replicaStatus("busy").get(0);
                    assertThat(busy.sentLsn() - busy.writeLsn()).as("busy's bytes in flight: its window and a chunk at most")
                            .isLessThanOrEqualTo(FrameDescriptor.STREAM_WINDOW + (256 << 10));
                } finally {
                    busyDisk.open();
                }
                waitUntilSame(primary, replica);
            }
        }
    }

    @Test
    void aCascadingReplicaPassesOnEveryLogAndTheLogsItCreatesAndDeletes() throws Exception {
        try (Side primary = Side.primary(work.resolve("p"))) {
            primary.store().create("orders");
            append(primary.log("orders"), "order", 40);
            try (ReplicationServer server = serve(primary);
                 Side middle = Side.replica(work.resolve("m"), server, (n, b) -> { })) {
                ReplicationServer[] cascade = new ReplicationServer[1];
                try (StoreReplicaClient upstream = StoreReplicaClient.builder(middle.logs(), server.address(), "m")
                        .statusIntervalMillis(200).onLogsChanged(() -> {
                            if (cascade[0] != null) {
                                cascade[0].refreshLogs();
                            }
                        }).start()) {
                    waitUntilSame(primary, middle);
                    cascade[0] = serve(middle);
                    try (ReplicationServer downstreamServer = cascade[0];
                         Side downstream = Side.replica(work.resolve("d"), downstreamServer, (n, b) -> { });
                         StoreReplicaClient client = follow(downstream, downstreamServer)) {
                        waitUntilSame(primary, downstream);
                        append(primary.store().create("events"), "event", 30);
                        primary.store().delete("orders");
                        server.refreshLogs();
                        waitUntilSame(primary, middle);
                        waitUntilSame(primary, downstream);
                        assertThat(downstream.names()).containsExactly("default", "events");
                    }
                }
            }
        }
    }

    @Test
    void aReplicaKeepsItsCopyOfALogWhoseSettingsChangeOnThePrimaryAndTakesTheNewSettings() throws Exception {
        try (Side primary = Side.primary(work.resolve("p"))) {
            primary.store().create("orders", b -> b.retentionTime(Duration.ofDays(7)));
            append(primary.log("orders"), "order", 800); // several segments
            try (ReplicationServer server = serveTellingRetention(primary);
                 TcpProxy link = TcpProxy.start(server.address(), 0);
                 Side replica = Side.replica(work.resolve("r"), server, (n, b) -> { });
                 StoreReplicaClient client = followTakingRetention(replica, link.address())) {
                waitUntilSame(primary, replica);
                assertThat(replica.log("orders").config().retentionTime()).isEqualTo(Duration.ofDays(7));
                long copy = link.bytesDown();

                changeRetention(primary, server, "orders", Duration.ofDays(14));
                waitUntil("the copy takes the new retention time",
                        () -> Duration.ofDays(14).equals(replica.log("orders").config().retentionTime()));
                append(primary.log("orders"), "after the change", 10);
                waitUntilSame(primary, replica);

                assertThat(link.bytesDown() - copy).as("sent after the change, of a copy of %d bytes", copy)
                        .isLessThan(copy / 10);
                assertThat(replica.log("orders").status().logId()).isEqualTo(primary.log("orders").status().logId());
                assertThat(client.rewinds()).isZero();
                waitUntilStreaming(server, client, "orders");
            }
        }
    }

    @Test
    void aReplicaThatWasDownWhileALogsSettingsChangedTakesThemWhenItComesBackAndKeepsItsCopy() throws Exception {
        try (Side primary = Side.primary(work.resolve("p"))) {
            primary.store().create("orders", b -> b.retentionTime(Duration.ofDays(7)));
            append(primary.log("orders"), "order", 800);
            try (ReplicationServer server = serveTellingRetention(primary);
                 TcpProxy link = TcpProxy.start(server.address(), 0);
                 Side replica = Side.replica(work.resolve("r"), server, (n, b) -> { })) {
                try (StoreReplicaClient client = followTakingRetention(replica, link.address())) {
                    waitUntilSame(primary, replica);
                }
                long copy = link.bytesDown();
                changeRetention(primary, server, "orders", Duration.ofDays(14));
                append(primary.log("orders"), "while the replica was down", 10);

                try (StoreReplicaClient client = followTakingRetention(replica, link.address())) {
                    waitUntil("the copy takes the new retention time",
                            () -> Duration.ofDays(14).equals(replica.log("orders").config().retentionTime()));
                    waitUntilSame(primary, replica);
                    assertThat(link.bytesDown() - copy).as("sent after the change, of a copy of %d bytes", copy)
                            .isLessThan(copy / 10);
                }
            }
        }
    }
}
