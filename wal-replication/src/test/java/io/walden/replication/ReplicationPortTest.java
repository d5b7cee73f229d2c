package io.walden.replication;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.walden.core.Durability;
import io.walden.core.Wal;
import io.walden.core.WalReader;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.protocol.Frame;
import io.walden.replication.replica.ReplicaClient;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;

import static io.walden.core.Eventually.waitUntil;
import static io.walden.replication.Replicas.ANY_LOOPBACK_PORT;
import static io.walden.replication.Replicas.config;
import static io.walden.replication.Replicas.follow;
import static io.walden.replication.Replicas.serve;
import static org.assertj.core.api.Assertions.assertThat;

/** What a peer can and cannot make the replication port hold, and the sizes of what it carries. */
@Timeout(60)
class ReplicationPortTest {
    @TempDir
    Path work;

    @Test
    void shouldCloseAConnectionThatDeclaresAFrameLargerThanAnyHandshakeFrameWithoutBufferingIt() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             ReplicationServer server = serve(primary)) {
            try (Socket s = new Socket(server.address().getAddress(), server.address().getPort())) {
                OutputStream out = s.getOutputStream();
                out.write(new byte[] {0, (byte) 0xFF, 0, 0, 'H', 0, 2}); // a 16 MiB "hello", of which 2 bytes come
                out.flush();
                s.setSoTimeout(5000);
                byte[] answer = s.getInputStream().readAllBytes(); // returns once the primary closed the connection
                assertThat(new String(answer, StandardCharsets.ISO_8859_1)).contains("longer than");
            }
            assertThat(server.replicaStatus()).isEmpty();
        }
    }

    @Test
    void shouldCloseAConnectionThatSendsNoHelloWithinTheHandshakeTimeout() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             ReplicationServer server = ReplicationServer.builder(primary).listen(ANY_LOOPBACK_PORT)
                     .handshakeTimeoutMillis(300).start();
             RawReplica silent = new RawReplica(server.address())) {
            Frame.Error error = silent.receive(Frame.Error.class, 5000);
            assertThat(error).isNotNull();
            assertThat(error.message()).contains("no hello within 300 ms");
            assertThat(silent.closedWithin(5000)).isTrue();
        }
    }

    @Test
    void shouldReplicateARecordLargerThanTheDefaultFrameLimit() throws Exception {
        long segment = 32L << 20;
        int big = 20 << 20; // more than the 16 MiB + 64 KiB a replica accepted before it knew the log's segment size
        try (Wal primary = Wal.open(config(work.resolve("p")).segmentSize(segment).maxPayloadSize(big).build());
             ReplicationServer server = serve(primary);
             Wal replica = Wal.open(config(work.resolve("r1")).segmentSize(segment).maxPayloadSize(big)
                     .logId(primary.status().logId()).build());
             ReplicaClient client = follow(replica, server, "r1")) {
            byte[] payload = new byte[big];
            Arrays.fill(payload, (byte) 7);
            long lsn = primary.append(payload, Durability.LOCAL);
            long after = primary.append("after".getBytes(), Durability.LOCAL);
            waitUntil(() -> replica.flushedLsn() > after);
            try (WalReader r = replica.reader(lsn)) {
                assertThat(r.next().payload()).isEqualTo(payload);
                assertThat(new String(r.next().payload())).isEqualTo("after");
            }
            assertThat(client.lastError()).isNull();
        }
    }

    @Test
    void shouldRefuseANewReplicaNameOnceEveryPlaceIsTakenUntilASlotIsDropped() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             ReplicationServer server = ReplicationServer.builder(primary).listen(ANY_LOOPBACK_PORT).maxReplicas(2).start()) {
            for (String name : new String[] {"r1", "r2"}) {
                try (Wal replica = Wal.open(config(work.resolve(name)).logId(primary.status().logId()).build());
                     ReplicaClient client = follow(replica, server, name)) {
                    waitUntil(() -> server.replica(name).isPresent());
                }
                waitUntil(() -> server.replica(name).isEmpty());
            }
            assertThat(server.slots()).containsOnlyKeys("r1", "r2");
            try (Wal replica = Wal.open(config(work.resolve("r3")).logId(primary.status().logId()).build());
                 ReplicaClient client = follow(replica, server, "r3")) {
                waitUntil(() -> client.lastError() != null);
                assertThat(client.lastError()).contains("at most 2 replicas");
                assertThat(client.fatalError()).as("not final: a slot may be dropped").isNull();
                assertThat(server.dropSlot("r1")).isTrue();
                waitUntil(() -> server.replica("r3").isPresent());
            }
            assertThat(server.slots()).containsOnlyKeys("r2", "r3");
        }
    }

    @Test
    void shouldRemoveAReplicasMetersWhenItDisconnects() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             ReplicationServer server = serve(primary)) {
            server.meterBinder().bindTo(registry);
            try (Wal replica = Wal.open(config(work.resolve("r1")).logId(primary.status().logId()).build());
                 ReplicaClient client = follow(replica, server, "r1")) {
                waitUntil(() -> server.replica("r1").isPresent());
                primary.append("x".getBytes(), Durability.LOCAL);
                waitUntil(() -> !registry.find("walden.replica.lsn").tags("log", "default", "replica", "r1").meters().isEmpty());
            }
            waitUntil(() -> server.replica("r1").isEmpty());
            waitUntil(() -> registry.find("walden.replica.lsn").tag("replica", "r1").meters().isEmpty()
                    && registry.find("walden.replica.lag").tag("replica", "r1").meters().isEmpty());
        }
    }

    @Test
    void shouldRefuseToStartOnAPortInUseWithAnErrorNamingItAndLeaveTheLogServable() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(),
                    taken.getLocalPort());
            Assertions.assertThatThrownBy(() -> ReplicationServer.builder(primary).listen(address).start())
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("cannot listen for replicas on")
                    .hasMessageContaining(String.valueOf(taken.getLocalPort()));
            primary.append("still taking appends".getBytes(), Durability.LOCAL);
            try (ReplicationServer replication = ReplicationServer.builder(primary).listen(ANY_LOOPBACK_PORT).start()) {
                assertThat(replication.address().getPort()).as("a second try on a free port").isPositive();
            }
        }
    }
}
