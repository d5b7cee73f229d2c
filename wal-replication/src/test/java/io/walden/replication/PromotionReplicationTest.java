package io.walden.replication;

import io.walden.core.Durability;
import io.walden.core.Epoch;
import io.walden.core.Wal;
import io.walden.core.WalReader;
import io.walden.core.WalRecord;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.replica.ReplicaClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static io.walden.core.Eventually.waitUntil;
import static io.walden.replication.Replicas.assertSameSegments;
import static io.walden.replication.Replicas.config;
import static io.walden.replication.Replicas.flushed;
import static io.walden.replication.Replicas.follow;
import static io.walden.replication.Replicas.serve;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Promotion, epochs on the wire, cascading replicas and the application's applier, over real TCP on 127.0.0.1. */
@Execution(ExecutionMode.CONCURRENT) // beside the other test classes: it mostly waits on its replicas
@Timeout(60)
class PromotionReplicationTest {
    @TempDir
    Path work;

    @Test
    void aPromotedReplicaAcceptsAppendsInANewEpochAndTheOldPrimaryThatWentOnRewindsItsTailAndFollows() throws Exception {
        Wal primary = Wal.open(config(work.resolve("p")).build());
        try (Wal replica = Wal.open(config(work.resolve("r1")).logId(primary.status().logId()).build())) {
            long lastShared;
            try (ReplicationServer server = serve(primary)) {
                ReplicaClient client = follow(replica, server, "r1");
                server.policy(SyncPolicy.parse("FIRST 1 (r1)"));
                for (int i = 0; i < 500; i++) {
                    primary.append(("shared " + i).getBytes(), Durability.ON);
                }
                lastShared = primary.flushedLsn();
                server.policy(null);
                client.close(); // the replica loses its primary...
            }
            primary.append("only the old primary has this".getBytes(), Durability.LOCAL); // ...which goes on alone
            primary.close();

            ReplicaClient stale = ReplicaClient.builder(replica, new InetSocketAddress("127.0.0.1", 1), "r1").start();
            Epoch epoch = stale.promote();
            assertThat(epoch).isEqualTo(new Epoch(2, lastShared));
            long first = replica.append("new primary".getBytes(), Durability.LOCAL);
            assertThat(first).isEqualTo(lastShared);

            try (ReplicationServer promoted = serve(replica);
                 Wal oldPrimary = Wal.open(config(work.resolve("p")).build());
                 ReplicaClient rejoin = follow(oldPrimary, promoted, "old")) {
                // Its record after the switch point was never the new primary's: it is removed, and the old primary
                // follows from the switch point, in the new epoch.
                waitUntil(() -> oldPrimary.status().epoch() == 2 && oldPrimary.flushedLsn() >= replica.flushedLsn());
                assertThat(rejoin.fatalError()).isNull();
                long next = replica.append("after the rejoin".getBytes(), Durability.LOCAL);
                // Readers on a replica see what its primary reported flushed: a keepalive may bring that after the bytes.
                waitUntil(() -> oldPrimary.flushedLsn() > next && oldPrimary.readLimit() > next);
                try (WalReader r = oldPrimary.reader(lastShared)) {
                    assertThat(new String(r.next().payload())).isEqualTo("new primary");
                    assertThat(new String(r.next().payload())).isEqualTo("after the rejoin");
                }
                assertThat(oldPrimary.status().history()).isEqualTo(replica.status().history());
            }
        }
        assertSameSegments(work.resolve("r1"), work.resolve("p"));
    }

    @Test
    void aReplicaPromotedThatTookNoAppendFollowsARivalPromotedInALaterEpochAndDropsItsUnlivedEpoch() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             Wal r1 = Wal.open(config(work.resolve("r1")).logId(primary.status().logId()).build());
             Wal r2 = Wal.open(config(work.resolve("r2")).logId(primary.status().logId()).build())) {
            bothHoldThenFirstPromoted(primary, r1, r2); // r1 is elected, then lost before anyone follows it
            assertThat(r1.status().epoch()).isEqualTo(2);
            // r2 is elected in its place; its coordinator knows epoch 2 was taken, so it numbers its own 3.
            r2.replication().refuseAppends("electing");
            Epoch three = r2.replication().promote(3);
            assertThat(three.number()).isEqualTo(3);
            long lsn = r2.append("epoch three".getBytes(), Durability.LOCAL);
            try (ReplicationServer server = serve(r2);
                 ReplicaClient back = follow(r1, server, "r1")) {
                waitUntil(() -> r1.status().epoch() == 3 && r1.flushedLsn() > lsn);
                assertThat(back.fatalError()).isNull();
                assertThat(r1.status().history()).isEqualTo(r2.status().history());
                assertThat(r1.status().history().epochs()).extracting(Epoch::number).containsExactly(1, 3);
            }
        }
        assertSameSegments(work.resolve("r1"), work.resolve("r2"));
    }

    @Test
    void aReplicaPromotedThatTookAppendsAloneRewindsThemToFollowARivalPromotedInALaterEpoch() throws Exception {
        long shared;
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             Wal r1 = Wal.open(config(work.resolve("r1")).logId(primary.status().logId()).build());
             Wal r2 = Wal.open(config(work.resolve("r2")).logId(primary.status().logId()).build())) {
            shared = bothHoldThenFirstPromoted(primary, r1, r2);
            long lone = r1.append("only r1, never acknowledged by a replica".getBytes(), Durability.LOCAL);
            r2.replication().refuseAppends("electing");
            r2.replication().promote(3);
            long lsn = r2.append("epoch three".getBytes(), Durability.LOCAL);
            assertThat(lsn).isEqualTo(lone); // the same place in the log, two different records
            try (ReplicationServer server = serve(r2);
                 ReplicaClient back = follow(r1, server, "r1")) {
                waitUntil(() -> r1.status().epoch() == 3 && r1.flushedLsn() > lsn && r1.readLimit() > lsn);
                assertThat(back.fatalError()).isNull();
                assertThat(back.rewinds()).isEqualTo(1);
                assertThat(r1.status().history().epochs()).containsExactly(new Epoch(1, 0), new Epoch(3, shared));
                try (WalReader r = r1.reader(lsn)) {
                    assertThat(new String(r.next().payload())).isEqualTo("epoch three");
                }
            }
        }
        assertSameSegments(work.resolve("r1"), work.resolve("r2"));
    }

    /**
     * r1 and r2 both hold the primary's 300 records (ANY 2), then r1 is promoted (epoch 2) and the primary is gone.
     *
     * @return where they both end: r1's epoch 2 begins there
     */
    private long bothHoldThenFirstPromoted(Wal primary, Wal r1, Wal r2) throws Exception {
        try (ReplicationServer server = serve(primary);
             ReplicaClient c1 = follow(r1, server, "r1");
             ReplicaClient c2 = follow(r2, server, "r2")) {
            server.policy(SyncPolicy.parse("ANY 2 (r1, r2)"));
            for (int i = 0; i < 300; i++) {
                primary.append(new byte[300], Durability.ON);
            }
            server.policy(null);
            long shared = r2.flushedLsn();
            c1.promote();
            return shared;
        }
    }

    @Test
    void aReplicaThatStoppedAtTheSwitchPointFollowsThePromotedPrimaryAndAdoptsItsHistory() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             Wal r1 = Wal.open(config(work.resolve("r1")).logId(primary.status().logId()).build());
             Wal r2 = Wal.open(config(work.resolve("r2")).logId(primary.status().logId()).build())) {
            bothHoldThenFirstPromoted(primary, r1, r2);
            assertThat(r2.flushedLsn()).isEqualTo(r1.insertLsn());
            try (ReplicationServer server = serve(r1);
                 ReplicaClient c2 = follow(r2, server, "r2")) {
                server.policy(SyncPolicy.parse("FIRST 1 (r2)"));
                waitUntil(() -> r2.status().epoch() == 2);
                long lsn = r1.append("epoch two".getBytes(), Durability.ON);
                assertThat(r2.flushedLsn()).isGreaterThan(lsn);
                assertThat(r2.status().history()).isEqualTo(r1.status().history());
                assertThat(c2.fatalError()).isNull();
            }
        }
        assertSameSegments(work.resolve("r1"), work.resolve("r2"));
    }

    @Test
    void aCascadingReplicaStreamsFromAReplicaAndReportsItsOwnPositions() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             Wal middle = Wal.open(config(work.resolve("middle")).logId(primary.status().logId()).build());
             Wal leaf = Wal.open(config(work.resolve("leaf")).logId(primary.status().logId()).build());
             ReplicationServer server = serve(primary);
             ReplicaClient upstream = follow(middle, server, "middle");
             ReplicationServer relay = serve(middle);
             ReplicaClient downstream = follow(leaf, relay, "leaf")) {
            for (int i = 0; i < 3000; i++) {
                primary.append(("record " + i).getBytes(), i % 50 == 0 ? Durability.LOCAL : Durability.OFF);
            }
            primary.flush();
            waitUntil(() -> leaf.flushedLsn() == primary.flushedLsn());
            waitUntil(() -> flushed(relay, "leaf") == primary.flushedLsn());
            assertThat(flushed(server, "middle")).as("the middle reports its own flushed end").isEqualTo(primary.flushedLsn());
            try (WalReader r = leaf.reader(leaf.oldestLsn())) {
                for (int i = 0; i < 3000; i++) {
                    assertThat(new String(r.next().payload())).isEqualTo("record " + i);
                }
            }
            upstream.promote(); // the middle becomes a primary: the leaf must learn the new epoch
            waitUntil(() -> leaf.status().epoch() == 2);
            long lsn = middle.append("after promotion".getBytes(), Durability.LOCAL);
            waitUntil(() -> leaf.flushedLsn() > lsn);
        }
        assertSameSegments(work.resolve("middle"), work.resolve("leaf"));
    }

    @Test
    void remoteApplyWaitsForTheApplicationsApplierAndAFailingRecordIsRetriedNotSkipped() throws Exception {
        List<String> applied = new CopyOnWriteArrayList<>();
        AtomicInteger failuresLeft = new AtomicInteger(2);
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             Wal replica = Wal.open(config(work.resolve("r1")).logId(primary.status().logId()).build());
             ReplicationServer server = serve(primary);
             ReplicaClient client = ReplicaClient.builder(replica, server.address(), "r1").statusIntervalMillis(100)
                     .applier(record -> apply(record, applied, failuresLeft), replica.insertLsn()).start()) {
            waitUntil(() -> server.replica("r1").isPresent());
            server.policy(SyncPolicy.parse("FIRST 1 (r1)"));
            for (int i = 0; i < 50; i++) {
                primary.append(("ok " + i).getBytes(), Durability.REMOTE_APPLY);
                assertThat(applied).as("REMOTE_APPLY returns after the applier took it").endsWith("ok " + i);
            }
            long poisoned = primary.append("poison".getBytes(), Durability.REMOTE_APPLY); // fails twice, then is taken
            assertThat(applied).endsWith("poison");
            assertThat(failuresLeft.get()).isZero();
            assertThat(client.appliedLsn()).isGreaterThan(poisoned);
            assertThat(applied).hasSize(51).doesNotHaveDuplicates();
            assertThat(client.applyError()).isNull();
        }
    }

    private static void apply(WalRecord record, List<String> applied, AtomicInteger failuresLeft) {
        String text = new String(record.payload());
        if (text.equals("poison") && failuresLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new IllegalStateException("the application cannot take this yet");
        }
        applied.add(text);
    }

    @Test
    void aPromotedLogPointedBackAtTheStalePrimaryIsToldSoAndKeepsItsNewerEpoch() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             Wal replica = Wal.open(config(work.resolve("r1")).logId(primary.status().logId()).build());
             ReplicationServer server = serve(primary)) {
            try (ReplicaClient client = follow(replica, server, "r1")) {
                server.policy(SyncPolicy.parse("FIRST 1 (r1)"));
                primary.append("shared".getBytes(), Durability.ON);
                server.policy(null);
                client.promote();
            }
            replica.append("epoch two".getBytes(), Durability.LOCAL);
            try (ReplicaClient back = follow(replica, server, "r1")) {
                waitUntil(() -> back.lastError() != null);
                assertThat(back.lastError()).contains("stale").doesNotContain("rebuild");
                assertThat(back.fatalError()).as("not final: the operator points it elsewhere").isNull();
                assertThat(replica.status().epoch()).isEqualTo(2);
                assertThat(server.replicaStatus()).isEmpty();
            }
        }
    }

    @Test
    void promotingTwiceOrAfterCloseIsRefused() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             Wal replica = Wal.open(config(work.resolve("r1")).logId(primary.status().logId()).build());
             ReplicationServer server = serve(primary)) {
            try (ReplicaClient client = follow(replica, server, "r1")) {
                client.promote();
                assertThatThrownBy(client::promote).isInstanceOf(IllegalStateException.class).hasMessageContaining("already promoted");
            }
            ReplicaClient closed = follow(replica, server, "r1");
            closed.close();
            assertThatThrownBy(closed::promote).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        }
    }
}
