package io.walden.replication;

import io.walden.core.Durability;
import io.walden.core.Eventually;
import io.walden.core.Wal;
import io.walden.core.WalReader;
import io.walden.core.WalRecord;
import io.walden.core.internal.sync.SyncOverride;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.replica.ReplicaClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static io.walden.core.Eventually.waitUntil;
import static io.walden.replication.Replicas.ANY_LOOPBACK_PORT;
import static io.walden.replication.Replicas.config;
import static io.walden.replication.Replicas.flushed;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A sender ships records once they are written, before the primary's force returns (docs/replication.md, "Shipping
 * before the flush"): the replica's write and force overlap the primary's, every level still waits for the primary's
 * own flush, and nothing the primary has not flushed becomes visible on the replica. The primary's forces are held
 * at a gate to stretch the window in which a record is written there but not flushed.
 */
@Timeout(60)
class ShipBeforeFlushTest {
    @TempDir
    Path work;

    private final GatedSync gate = new GatedSync();

    private Wal primary() {
        return Wal.open(SyncOverride.set(config(work.resolve("p")), gate).build());
    }

    private Wal replica(Wal primary) {
        return Wal.open(config(work.resolve("r1")).logId(primary.status().logId()).build());
    }

    private static ReplicaClient follow(Wal replica, ReplicationServer server, RecordApplier applier) {
        ReplicaClient.Builder b = ReplicaClient.builder(replica, server.address(), "r1").statusIntervalMillis(200);
        return (applier == null ? b : b.applier(applier, replica.oldestLsn())).start();
    }

    private interface RecordApplier extends io.walden.replication.replica.RecordApplier {
    }

    private static ReplicationServer serve(Wal primary, boolean flushedOnly) throws InterruptedException {
        ReplicationServer server = ReplicationServer.builder(primary).listen(ANY_LOOPBACK_PORT).keepaliveMillis(1000)
                .shipFlushedOnly(flushedOnly).start();
        server.policy(SyncPolicy.parse("FIRST 1 (r1)"));
        return server;
    }

    @Test
    void aReplicaWritesAndFlushesARecordWhileThePrimaryIsStillForcingIt() throws Exception {
        try (Wal primary = primary();
             ReplicationServer server = serve(primary, false);
             Wal replica = replica(primary);
             ReplicaClient client = follow(replica, server, null)) {
            waitUntil(() -> Replicas.streaming(server, "r1"));
            gate.close();
            CompletableFuture<Long> on = primary.appendAsync("on".getBytes(), Durability.ON);
            waitUntil(() -> flushed(server, "r1") > primary.flushedLsn());
            assertThat(on).as("ON waits for the primary's own flush as well").isNotDone();
            long lsn;
            gate.open();
            lsn = on.get(10, TimeUnit.SECONDS);
            assertThat(primary.flushedLsn()).isGreaterThan(lsn);
            assertThat(replica.flushedLsn()).isGreaterThan(lsn);
        }
    }

    @Test
    void noLevelThatPromisesAReplicaIsReleasedBeforeThePrimaryFlushedTheRecord() throws Exception {
        try (Wal primary = primary();
             ReplicationServer server = serve(primary, false);
             Wal replica = replica(primary);
             ReplicaClient client = follow(replica, server, null)) {
            waitUntil(() -> Replicas.streaming(server, "r1"));
            gate.close();
            List<CompletableFuture<Long>> waiting = List.of(
                    primary.appendAsync("write".getBytes(), Durability.REMOTE_WRITE),
                    primary.appendAsync("on".getBytes(), Durability.ON),
                    primary.appendAsync("apply".getBytes(), Durability.REMOTE_APPLY));
            waitUntil(() -> replica.flushedLsn() == primary.writtenLsn() && primary.writtenLsn() > primary.flushedLsn());
            // The replica has reported it wrote and flushed them: what would release them, were it not for the primary.
            waitUntil(() -> flushed(server, "r1") >= primary.writtenLsn());
            assertThat(waiting).noneMatch(CompletableFuture::isDone);
            gate.open();
            for (CompletableFuture<Long> f : waiting) {
                assertThat(f.get(10, TimeUnit.SECONDS)).isLessThan(primary.flushedLsn());
            }
        }
    }

    @Test
    void aPrimaryThatStopsTakingAppendsAfterShippingUnflushedBytesTellsItsReplicaToRetryNotThatItDiverged() throws Exception {
        try (Wal primary = primary();
             ReplicationServer server = serve(primary, false);
             Wal replica = replica(primary);
             ReplicaClient client = follow(replica, server, null)) {
            try {
                waitUntil(() -> Replicas.streaming(server, "r1"));
                gate.close();
                primary.appendAsync("shipped before its flush".getBytes(), Durability.ON);
                waitUntil(() -> replica.writtenLsn() == primary.writtenLsn() && primary.writtenLsn() > primary.flushedLsn());
                // As a group member fenced by a lost coordinator session: its readers and senders now stop at its flushed
                // end, behind what the replica already holds. A replica told it diverged would leave the elections.
                primary.replication().refuseAppends("fenced: another member may be the primary now");
                waitUntil(() -> client.fatalError() != null || client.lastError() != null && client.lastError().contains("retry later"));
                assertThat(client.fatalError()).as("the replica may follow the next primary").isNull();
                assertThat(client.lastError()).contains("retry later");
            } finally {
                gate.open();
            }
        }
    }

    @Test
    void aReplicasReadersAndApplierSeeNoRecordItsPrimaryHasNotFlushed() throws Exception {
        List<String> applied = new CopyOnWriteArrayList<>();
        try (Wal primary = primary();
             ReplicationServer server = serve(primary, false);
             Wal replica = replica(primary);
             ReplicaClient client = follow(replica, server, r -> applied.add(new String(r.payload())))) {
            waitUntil(() -> Replicas.streaming(server, "r1"));
            primary.append("flushed".getBytes(), Durability.ON);
            waitUntil(() -> applied.contains("flushed"));
            gate.close();
            CompletableFuture<Long> apply = primary.appendAsync("not yet".getBytes(), Durability.REMOTE_APPLY);
            waitUntil(() -> replica.flushedLsn() == primary.writtenLsn() && primary.writtenLsn() > primary.flushedLsn());
            waitUntil(() -> flushed(server, "r1") >= primary.writtenLsn()); // done with them, as far as it can go
            try (WalReader written = replica.reader(replica.oldestLsn(), WalReader.Visibility.WRITTEN)) {
                WalRecord first = written.next();
                assertThat(new String(first.payload())).isEqualTo("flushed");
                assertThat(written.next()).as("held on the replica, not visible there").isNull();
            }
            assertThat(applied).containsExactly("flushed");
            assertThat(apply).isNotDone();
            gate.open();
            long lsn = apply.get(10, TimeUnit.SECONDS);
            assertThat(applied).containsExactly("flushed", "not yet");
            try (WalReader r = replica.reader(lsn)) {
                assertThat(new String(r.next().payload())).isEqualTo("not yet");
            }
        }
    }

    @Test
    void withShipFlushedOnlyNothingLeavesThePrimaryBeforeItsForceReturns() throws Exception {
        try (Wal primary = primary();
             ReplicationServer server = serve(primary, true);
             Wal replica = replica(primary);
             ReplicaClient client = follow(replica, server, null)) {
            waitUntil(() -> Replicas.streaming(server, "r1"));
            long before = replica.insertLsn();
            gate.close();
            CompletableFuture<Long> on = primary.appendAsync("on".getBytes(), Durability.ON);
            waitUntil(() -> primary.writtenLsn() > primary.flushedLsn());
            Eventually.holdsThroughout("the replica received nothing", 300, () -> replica.insertLsn() == before);
            gate.open();
            long lsn = on.get(10, TimeUnit.SECONDS);
            assertThat(replica.flushedLsn()).isGreaterThan(lsn);
        }
    }
}
