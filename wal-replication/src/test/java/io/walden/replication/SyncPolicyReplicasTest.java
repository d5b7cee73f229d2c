package io.walden.replication;

import io.walden.core.Durability;
import io.walden.core.RemoteCommitTimeoutException;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.internal.sync.SyncOverride;
import io.walden.core.internal.sync.SyncStrategy;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.replica.ReplicaClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.InterruptedIOException;
import java.nio.file.Path;
import java.time.Duration;

import static io.walden.core.Eventually.waitUntil;
import static io.walden.replication.Replicas.config;
import static io.walden.replication.Replicas.follow;
import static io.walden.replication.Replicas.serve;
import static io.walden.replication.Replicas.streaming;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** FIRST (priority) and ANY (quorum) policies with three replicas, one of them stopped or cut off. */
@Timeout(90)
class SyncPolicyReplicasTest {
    @TempDir
    Path work;

    private Wal primary;
    private final Wal[] replicas = new Wal[3];

    private void open(Duration remoteTimeout) {
        primary = Wal.open(config(work.resolve("p")).remoteCommitTimeout(remoteTimeout).build());
        for (int i = 0; i < 3; i++) {
            replicas[i] = Wal.open(config(work.resolve("r" + (i + 1))).logId(primary.status().logId()).build());
        }
    }

    private void closeAll() {
        for (Wal w : replicas) {
            w.close();
        }
        primary.close();
    }

    private static void awaitStreaming(ReplicationServer server, String... names) throws Exception {
        for (String name : names) {
            waitUntil(() -> streaming(server, name));
        }
    }

    /** Each connected replica's sync state, by name: "r1=sync r2=potential". */
    private static String syncStates(ReplicationServer server) {
        return String.join(" ", server.replicaStatus().stream().map(r -> r.name() + "=" + r.syncState()).toList());
    }

    @Test
    void firstWaitsForTheHighestPriorityReplicasAndFallsBackToTheNextWhenOneStops() throws Exception {
        open(Duration.ofSeconds(20));
        try (ReplicationServer server = serve(primary);
             ReplicaClient c2 = follow(replicas[1], server, "r2");
             ReplicaClient c3 = follow(replicas[2], server, "r3")) {
            ReplicaClient c1 = follow(replicas[0], server, "r1");
            awaitStreaming(server, "r1", "r2", "r3");
            server.policy(SyncPolicy.parse("FIRST 2 (r1, r2, r3)"));
            long lsn = primary.append("r1 and r2 confirm".getBytes(), Durability.ON);
            assertThat(replicas[0].flushedLsn()).isGreaterThan(lsn);
            assertThat(replicas[1].flushedLsn()).isGreaterThan(lsn);
            assertThat(syncStates(server)).isEqualTo("r1=sync r2=sync r3=potential");

            c1.close(); // r1 stops: r3, next in priority, takes its place
            waitUntil(() -> server.replica("r1").isEmpty());
            for (int i = 0; i < 20; i++) {
                long l = primary.append(("r2 and r3 confirm " + i).getBytes(), Durability.ON);
                assertThat(replicas[1].flushedLsn()).isGreaterThan(l);
                assertThat(replicas[2].flushedLsn()).isGreaterThan(l);
            }
            assertThat(replicas[0].flushedLsn()).isLessThan(primary.flushedLsn());
            assertThat(syncStates(server)).isEqualTo("r2=sync r3=sync");
        } finally {
            closeAll();
        }
    }

    @Test
    void anyReleasesOnAQuorumWithoutTheCutOffReplicaAndWaitsWhenTooFewRemain() throws Exception {
        open(Duration.ofMillis(400));
        try (ReplicationServer server = serve(primary);
             TcpProxy link3 = TcpProxy.start(server.address(), 0);
             ReplicaClient c1 = follow(replicas[0], server, "r1");
             ReplicaClient c3 = ReplicaClient.builder(replicas[2], link3.address(), "r3").statusIntervalMillis(200).start()) {
            ReplicaClient c2 = follow(replicas[1], server, "r2");
            awaitStreaming(server, "r1", "r2", "r3");
            server.policy(SyncPolicy.parse("ANY 2 (r1, r2, r3)"));
            assertThat(syncStates(server)).isEqualTo("r1=quorum r2=quorum r3=quorum");
            link3.blackhole(true); // r3 is cut off: r1 and r2 make the quorum
            long lsn = 0;
            for (int i = 0; i < 20; i++) {
                lsn = primary.append(("quorum " + i).getBytes(), Durability.ON);
                assertThat(replicas[0].flushedLsn()).isGreaterThan(lsn);
                assertThat(replicas[1].flushedLsn()).isGreaterThan(lsn);
            }
            assertThat(replicas[2].flushedLsn()).as("the cut-off replica has none of them").isLessThan(lsn);

            c2.close(); // now only r1 can confirm: too few
            waitUntil(() -> server.replica("r2").isEmpty());
            assertThatThrownBy(() -> primary.append("one is not a quorum".getBytes(), Durability.ON))
                    .isInstanceOf(RemoteCommitTimeoutException.class);

            link3.blackhole(false); // r3 returns and catches up: the quorum is back
            waitUntil(() -> replicas[2].flushedLsn() == primary.flushedLsn());
            long back = primary.append("quorum again".getBytes(), Durability.ON);
            assertThat(replicas[0].flushedLsn()).isGreaterThan(back);
            assertThat(replicas[2].flushedLsn()).isGreaterThan(back);
        } finally {
            closeAll();
        }
    }

    @Test
    void remoteWriteIsReleasedBeforeTheReplicaFlushesButOnIsNot() throws Exception {
        Object gate = new Object();
        boolean[] open = {false};
        SyncStrategy gated = (segment, from, to) -> { // the replica's disk, held until the test opens it
            synchronized (gate) {
                while (!open[0]) {
                    try {
                        gate.wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new InterruptedIOException();
                    }
                }
            }
            segment.force(false);
        };
        try (Wal primary = Wal.open(config(work.resolve("p")).remoteCommitTimeout(Duration.ofMillis(500)).build());
             Wal replica = Wal.open(SyncOverride.set(WalConfig.builder(work.resolve("r1")).segmentSize(Replicas.SEGMENT)
                     .logId(primary.status().logId()), gated).build());
             ReplicationServer server = serve(primary);
             ReplicaClient client = follow(replica, server, "r1")) {
            waitUntil(() -> streaming(server, "r1"));
            server.policy(SyncPolicy.parse("FIRST 1 (r1)"));
            long written = primary.append("written, not flushed".getBytes(), Durability.REMOTE_WRITE);
            assertThat(replica.writtenLsn()).isGreaterThan(written);
            assertThat(replica.flushedLsn()).as("released before the replica's flush").isLessThanOrEqualTo(written);
            assertThatThrownBy(() -> primary.append("needs the flush".getBytes(), Durability.ON))
                    .isInstanceOf(RemoteCommitTimeoutException.class);
            synchronized (gate) {
                open[0] = true;
                gate.notifyAll();
            }
            long flushed = primary.append("flushed".getBytes(), Durability.ON);
            assertThat(replica.flushedLsn()).isGreaterThan(flushed);
        }
    }
}
