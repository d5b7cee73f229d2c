package io.walden.replication;

import io.walden.core.Durability;
import io.walden.core.RemoteCommitTimeoutException;
import io.walden.core.Wal;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.replica.ReplicaClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static io.walden.core.Eventually.waitUntil;
import static io.walden.replication.Replicas.assertSameSegments;
import static io.walden.replication.Replicas.config;
import static io.walden.replication.Replicas.serve;
import static io.walden.replication.Replicas.streaming;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A replica behind a TCP proxy that delays or black-holes the link: remote-level commits wait on the link. */
@Timeout(90)
class LinkFailureTest {
    @TempDir
    Path work;

    @Test
    void aPartitionMakesRemoteCommitsTimeOutAsConfiguredAndTrafficResumesWhenItHeals() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).remoteCommitTimeout(Duration.ofMillis(500)).build());
             Wal replica = Wal.open(config(work.resolve("r1")).logId(primary.status().logId()).build());
             ReplicationServer server = serve(primary); // 1 s sender timeout: a silent replica is dropped after 2 s
             TcpProxy link = TcpProxy.start(server.address(), 0);
             ReplicaClient client = ReplicaClient.builder(replica, link.address(), "r1").statusIntervalMillis(200).start()) {
            waitUntil(() -> server.replica("r1").isPresent());
            server.policy(SyncPolicy.parse("FIRST 1 (r1)"));
            primary.append("before".getBytes(), Durability.ON);

            link.blackhole(true);
            long started = System.nanoTime();
            assertThatThrownBy(() -> primary.append("during".getBytes(), Durability.ON))
                    .isInstanceOf(RemoteCommitTimeoutException.class).hasMessageContaining("durable locally");
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).isGreaterThanOrEqualTo(450);
            assertThat(primary.append("local still works".getBytes(), Durability.LOCAL)).isPositive();
            waitUntil(() -> server.replica("r1").isEmpty()); // dropped at the sender timeout

            link.blackhole(false);
            long after = primary.append("after".getBytes(), Durability.ON); // waits for the replica's return
            assertThat(replica.flushedLsn()).isGreaterThan(after);
            assertThat(client.fatalError()).isNull();
        }
        assertSameSegments(work.resolve("p"), work.resolve("r1"));
    }

    @Test
    void aLongLinkDelaysEveryRemoteCommitByAtLeastItsRoundTripButNotLocalOnes() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             Wal replica = Wal.open(config(work.resolve("r1")).logId(primary.status().logId()).build());
             ReplicationServer server = serve(primary);
             TcpProxy link = TcpProxy.start(server.address(), 25_000); // 50 ms round trip
             ReplicaClient client = ReplicaClient.builder(replica, link.address(), "r1").start()) {
            waitUntil(() -> streaming(server, "r1"));
            server.policy(SyncPolicy.parse("FIRST 1 (r1)"));
            for (int i = 0; i < 5; i++) {
                long started = System.nanoTime();
                long lsn = primary.append(("far " + i).getBytes(), Durability.REMOTE_WRITE);
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).as("a round trip at least").isGreaterThanOrEqualTo(49);
                assertThat(replica.writtenLsn()).isGreaterThan(lsn);
            }
            long fastest = Long.MAX_VALUE; // the fastest of a few: one slow force on a busy machine proves nothing
            for (int i = 0; i < 5; i++) {
                long started = System.nanoTime();
                primary.append("near".getBytes(), Durability.LOCAL);
                fastest = Math.min(fastest, System.nanoTime() - started);
            }
            assertThat(TimeUnit.NANOSECONDS.toMillis(fastest)).as("LOCAL does not wait on the link").isLessThan(49);
        }
    }
}
