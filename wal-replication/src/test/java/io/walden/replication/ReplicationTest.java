package io.walden.replication;

import io.walden.core.AppendsRefusedException;
import io.walden.core.Durability;
import io.walden.core.Epoch;
import io.walden.core.ForgedRecords;
import io.walden.core.RemoteCommitTimeoutException;
import io.walden.core.RemoteCommitUnconfirmedException;
import io.walden.core.ReplicationChunk;
import io.walden.core.Wal;
import io.walden.core.WalReader;
import io.walden.core.WalRecord;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.primary.ReplicaStatus;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.protocol.Frame;
import io.walden.replication.protocol.FrameDescriptor;
import io.walden.replication.replica.PrimaryIdentity;
import io.walden.replication.replica.ReplicaClient;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static io.walden.core.Eventually.waitUntil;
import static io.walden.replication.Replicas.ANY_LOOPBACK_PORT;
import static io.walden.replication.Replicas.assertSameSegments;
import static io.walden.replication.Replicas.config;
import static io.walden.replication.Replicas.flushed;
import static io.walden.replication.Replicas.follow;
import static io.walden.replication.Replicas.serve;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A primary and replicas in one JVM, over real TCP on 127.0.0.1. */
@Execution(ExecutionMode.CONCURRENT) // beside the other test classes: it mostly waits on its replicas
@Timeout(60)
class ReplicationTest {
    @TempDir
    Path work;

    @Test
    void shouldReleaseEachLevelOnlyOnceTheSynchronousReplicaReachedIt() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             ReplicationServer server = serve(primary);
             Wal replica = Wal.open(config(work.resolve("r1")).logId(primary.status().logId()).build());
             ReplicaClient client = follow(replica, server, "r1")) {
            waitUntil(() -> server.replica("r1").isPresent());
            server.policy(SyncPolicy.parse("FIRST 1 (r1)"));
            for (int i = 0; i < 300; i++) {
                long on = primary.append(("on " + i).getBytes(), Durability.ON);
                assertThat(replica.flushedLsn()).as("ON returned only after the replica flushed it").isGreaterThan(on);
                long apply = primary.append(("apply " + i).getBytes(), Durability.REMOTE_APPLY);
                try (WalReader r = replica.reader(apply)) {
                    assertThat(new String(r.next().payload())).as("REMOTE_APPLY: visible on the replica").isEqualTo("apply " + i);
                }
                long write = primary.append(("write " + i).getBytes(), Durability.REMOTE_WRITE);
                assertThat(replica.writtenLsn()).isGreaterThan(write);
            }
            assertThatThrownBy(() -> replica.append(new byte[1], Durability.OFF))
                    .isInstanceOf(AppendsRefusedException.class).hasMessageContaining("replica of the primary");
            ReplicaStatus r1 = server.replica("r1").orElseThrow();
            assertThat(r1.isStreaming()).isTrue();
            assertThat(r1.flushLagMillis()).as("flush lag measured").isBetween(0L, 5_000L);
        }
        assertSameSegments(work.resolve("p"), work.resolve("r1"));
    }

    @Test
    void shouldFailWaitingCommitsAsUnconfirmedWhenReplicationClosesNeverAcknowledgingThemAsReplicated() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Wal primary = Wal.open(config(work.resolve("p")).build())) {
            ReplicationServer server = serve(primary);
            server.policy(SyncPolicy.parse("FIRST 1 (r1)")); // r1 never connects
            Future<Long> blocked = pool.submit(() -> primary.append("waits for r1".getBytes(), Durability.ON));
            CompletableFuture<Long> async = primary.appendAsync("waits too".getBytes(), Durability.REMOTE_APPLY);
            assertThatThrownBy(() -> blocked.get(200, TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class);
            server.close(); // what a SIGTERM of the server does before it closes the log
            assertThatThrownBy(() -> blocked.get(10, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(RemoteCommitUnconfirmedException.class)
                    .hasMessageContaining("durable locally");
            assertThatThrownBy(() -> async.get(10, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(RemoteCommitUnconfirmedException.class);
            assertThatThrownBy(() -> primary.append("after close".getBytes(), Durability.ON))
                    .isInstanceOf(RemoteCommitUnconfirmedException.class);
            assertThat(primary.append("local still works".getBytes(), Durability.LOCAL)).isPositive();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldRefuseAReplicaWhoseEndIsNotARecordBoundaryOfThePrimaryEvenWhenAForgedRecordStartsThere() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             ReplicationServer server = serve(primary)) {
            // The primary's first record hides a well-formed record 16 bytes into its payload, at 0/70.
            byte[] payload = new byte[16 + 40];
            byte[] forged = ForgedRecords.record(0x40, 1, new byte[8]);
            System.arraycopy(forged, 0, payload, 16, forged.length);
            primary.append(payload, Durability.LOCAL);
            Path replicaDir = work.resolve("r1");
            try (Wal own = Wal.open(config(replicaDir).logId(primary.status().logId()).build())) {
                own.append(new byte[16], Durability.LOCAL); // the replica's own log ends at 0/70: inside that payload
                assertThat(own.insertLsn()).isEqualTo(0x70);
            }
            try (Wal replica = Wal.open(config(replicaDir).logId(primary.status().logId()).build());
                 ReplicaClient client = follow(replica, server, "r1")) {
                waitUntil(() -> client.fatalError() != null);
                assertThat(client.fatalError()).contains("not a record boundary");
                assertThat(replica.insertLsn()).as("nothing was applied").isEqualTo(0x70);
            }
        }
    }

    @Test
    void shouldClampAReplicasReportedPositionsToWhatWasSentToIt() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).remoteCommitTimeout(Duration.ofMillis(500)).build());
             ReplicationServer server = serve(primary)) {
            long start = primary.insertLsn();
            server.policy(SyncPolicy.parse("FIRST 1 (liar)"));
            try (RawReplica liar = new RawReplica(server.address())) {
                Epoch epoch = primary.status().history().current();
                liar.send(new Frame.Hello(FrameDescriptor.PROTOCOL_VERSION,
                        primary.status().logId(), epoch.number(), epoch.startLsn(), start, "liar", new byte[0]));
                assertThat(liar.receive(Frame.Welcome.class, 5000)).isNotNull();
                long huge = 1L << 62;
                liar.send(new Frame.Status(huge, huge, huge, 0, false));
                waitUntil(() -> server.replica("liar").map(r -> r.isStreaming()).orElse(false));
                assertThatThrownBy(() -> primary.append("not on the liar".getBytes(), Durability.ON))
                        .as("an ON commit is not released by a position the replica was never sent")
                        .isInstanceOf(RemoteCommitTimeoutException.class);
                assertThat(server.replica("liar").orElseThrow().flushLsn()).isLessThanOrEqualTo(start);
                assertThat(server.slots().get("liar")).as("its slot still protects what it lacks").isLessThanOrEqualTo(start);
            }
        }
    }

    @Test
    void shouldStartANewReplicaAtThePrimarysOldestKeptSegmentOnceThePrimaryHasTruncated() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             ReplicationServer server = serve(primary)) {
            while (primary.insertLsn() < 4 * Replicas.SEGMENT + 1000) {
                primary.append(new byte[700], Durability.OFF);
            }
            primary.flush();
            primary.truncateBefore(primary.insertLsn());
            assertThat(primary.oldestLsn()).as("the primary no longer has its start").isGreaterThan(3 * Replicas.SEGMENT);
            PrimaryIdentity identity = PrimaryIdentity.fetch(server.address(), "r1", null, null, 10_000);
            assertThat(identity.oldestLsn()).isEqualTo(primary.oldestLsn());
            assertThat(identity.history()).isEqualTo(primary.status().history());
            try (Wal replica = identity.openReplicaLog(config(work.resolve("r1")));
                 ReplicaClient client = follow(replica, server, "r1")) {
                assertThat(replica.oldestLsn()).isEqualTo(primary.oldestLsn());
                long last = primary.append("after the new replica joined".getBytes(), Durability.LOCAL);
                waitUntil(() -> replica.flushedLsn() > last);
                try (WalReader p = primary.reader(primary.oldestLsn()); WalReader r = replica.reader(replica.oldestLsn())) {
                    for (WalRecord a; (a = p.next()) != null; ) {
                        WalRecord b = r.next();
                        assertThat(b.lsn()).isEqualTo(a.lsn());
                        assertThat(b.payload()).isEqualTo(a.payload());
                    }
                    assertThat(r.next()).isNull();
                }
                assertThat(client.fatalError()).isNull();
            }
            try (Wal reopened = Wal.open(config(work.resolve("r1")).build());
                 ReplicaClient client = follow(reopened, server, "r1")) {
                long more = primary.append("after the replica restarted".getBytes(), Durability.LOCAL);
                waitUntil(() -> reopened.flushedLsn() > more);
                assertThat(reopened.status().recoveryReport().bytesCutOff()).isZero();
            }
        }
        assertSameSegments(work.resolve("p"), work.resolve("r1"));
    }

    @Test
    void shouldWaitWhileTooFewReplicasAreConnectedAndResumeWithoutAGap() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).remoteCommitTimeout(Duration.ofMillis(300)).build());
             ReplicationServer server = serve(primary);
             Wal replica = Wal.open(config(work.resolve("r1")).logId(primary.status().logId()).build())) {
            server.policy(SyncPolicy.parse("ANY 1 (r1, r2)"));
            assertThatThrownBy(() -> primary.append("nobody listens".getBytes(), Durability.ON))
                    .isInstanceOf(RemoteCommitTimeoutException.class).hasMessageContaining("durable locally");
            try (ReplicaClient client = follow(replica, server, "r2")) {
                waitUntil(() -> server.replica("r2").isPresent());
                for (int i = 0; i < 200; i++) {
                    primary.append(new byte[500], Durability.ON);
                }
            }
            waitUntil(() -> server.replica("r2").isEmpty());
            for (int i = 0; i < 100; i++) {
                primary.append(new byte[500], Durability.OFF); // written while the replica is away
            }
            try (ReplicaClient client = follow(replica, server, "r2")) {
                long lsn = primary.append("back".getBytes(), Durability.ON);
                assertThat(replica.flushedLsn()).isGreaterThan(lsn);
                assertThat(flushed(server, "r2")).isGreaterThan(lsn);
            }
            assertThat(replica.flushedLsn()).isEqualTo(primary.flushedLsn());
        }
    }

    @Test
    void shouldHoldBackTruncationForAnAbsentReplicaUpToTheSlotCap() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             ReplicationServer server = ReplicationServer.builder(primary).listen(ANY_LOOPBACK_PORT).keepaliveMillis(1000).maxSlotRetainedBytes(512 << 10).start();
             Wal replica = Wal.open(config(work.resolve("r1")).logId(primary.status().logId()).build())) {
            for (int i = 0; i < 100; i++) {
                primary.append(new byte[1000], Durability.OFF);
            }
            primary.flush();
            try (ReplicaClient client = follow(replica, server, "r1")) {
                waitUntil(() -> replica.flushedLsn() == primary.flushedLsn());
                waitUntil(() -> server.slots().getOrDefault("r1", 0L) == primary.flushedLsn());
            }
            long needed = replica.flushedLsn();
            for (int i = 0; i < 200; i++) { // ~200 KiB while the replica is away: within the slot's cap
                primary.append(new byte[1000], Durability.OFF);
            }
            primary.flush();
            primary.truncateBefore(primary.flushedLsn());
            assertThat(primary.oldestLsn()).as("the slot keeps what r1 still needs").isLessThanOrEqualTo(needed);
            try (ReplicaClient client = follow(replica, server, "r1")) {
                waitUntil(() -> replica.flushedLsn() == primary.flushedLsn());
                assertThat(client.fatalError()).isNull();
            }
            for (int i = 0; i < 800; i++) { // ~800 KiB more: past the 512 KiB cap
                primary.append(new byte[1000], Durability.OFF);
            }
            primary.flush();
            primary.truncateBefore(primary.flushedLsn());
            assertThat(server.slots()).as("the slot was dropped at the cap").doesNotContainKey("r1");
            assertThat(primary.oldestLsn()).isGreaterThan(replica.flushedLsn());
            try (ReplicaClient client = follow(replica, server, "r1")) {
                waitUntil(() -> client.fatalError() != null);
                assertThat(client.fatalError()).contains("already been removed");
            }
        }
    }

    @Test
    void aSlotSurvivesAPrimaryRestartAndStillHoldsBackTruncation() throws Exception {
        long needed;
        try (Wal replica = Wal.open(config(work.resolve("r1")).logId(logIdOfNewPrimary()).build())) {
            try (Wal primary = Wal.open(config(work.resolve("p")).build());
                 ReplicationServer server = serve(primary)) {
                for (int i = 0; i < 100; i++) {
                    primary.append(new byte[1000], Durability.OFF);
                }
                primary.flush();
                try (ReplicaClient client = follow(replica, server, "r1")) {
                    waitUntil(() -> server.slots().getOrDefault("r1", 0L) == primary.flushedLsn());
                }
                needed = replica.flushedLsn();
            }
            try (Wal primary = Wal.open(config(work.resolve("p")).build());
                 ReplicationServer server = serve(primary)) {
                assertThat(server.slots()).containsEntry("r1", needed);
                for (int i = 0; i < 300; i++) {
                    primary.append(new byte[1000], Durability.OFF);
                }
                primary.flush();
                primary.truncateBefore(primary.flushedLsn());
                assertThat(primary.oldestLsn()).as("the saved slot keeps what r1 still needs").isLessThanOrEqualTo(needed);
                try (ReplicaClient client = follow(replica, server, "r1")) {
                    waitUntil(() -> replica.flushedLsn() == primary.flushedLsn());
                    assertThat(client.fatalError()).isNull();
                }
            }
        }
    }

    /** Creates the primary's log (closed again) and answers its id, so that a replica can be made a copy of it. */
    private long logIdOfNewPrimary() {
        try (Wal primary = Wal.open(config(work.resolve("p")).build())) {
            return primary.status().logId();
        }
    }

    @Test
    void aReplicaFlushesAndReportsBytesItAppliedButNeverFlushedOnceItIsConnected() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             Wal replica = Wal.open(config(work.resolve("r1")).logId(primary.status().logId())
                     .writerDelay(Duration.ofHours(1)).build())) { // no background force: only the receiver flushes
            primary.append("applied by an earlier connection, never flushed".getBytes(), Durability.LOCAL);
            ReplicationChunk chunk = primary.replication().readFlushed(replica.insertLsn(), 1 << 20);
            replica.replication().writeReceived(chunk.startLsn(), chunk.bytes());
            assertThat(replica.flushedLsn()).isLessThan(replica.writtenLsn());
            try (ReplicationServer server = serve(primary);
                 ReplicaClient client = follow(replica, server, "r1")) {
                waitUntil(() -> flushed(server, "r1") == primary.flushedLsn());
                assertThat(replica.flushedLsn()).isEqualTo(replica.writtenLsn());
            }
        }
    }

    @Test
    void closingAReplicationEndpointTwiceIsHarmless() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build())) {
            ReplicationServer server = serve(primary);
            server.close();
            Assertions.assertThatCode(server::close).doesNotThrowAnyException();
        }
    }

    @Test
    void shouldRefuseAReplicaOfAnotherLogForGood() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             ReplicationServer server = serve(primary);
             Wal stranger = Wal.open(config(work.resolve("other")).build());
             ReplicaClient client = follow(stranger, server, "r9")) {
            waitUntil(() -> client.fatalError() != null);
            assertThat(client.fatalError()).contains("another log");
            assertThat(server.replicaStatus()).isEmpty();
        }
    }
}
