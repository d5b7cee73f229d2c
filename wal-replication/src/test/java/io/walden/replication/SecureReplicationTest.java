package io.walden.replication;

import io.walden.core.Durability;
import io.walden.core.Eventually;
import io.walden.core.Wal;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.replica.ReplicaClient;
import io.walden.replication.tls.ReplicationTls;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static io.walden.core.Eventually.waitUntil;
import static io.walden.replication.Replicas.ANY_LOOPBACK_PORT;
import static io.walden.replication.Replicas.config;
import static org.assertj.core.api.Assertions.assertThat;

/** The replication handshake's shared secret, TLS and mutual TLS, over real TCP on 127.0.0.1. */
@Timeout(60)
class SecureReplicationTest {
    @TempDir
    static Path certs;
    @TempDir
    Path work;

    /** Self-signed pairs: one for the primary (127.0.0.1), one for a replica, one a stranger's. */
    @BeforeAll
    static void makeCertificates() throws Exception {
        for (String who : new String[] {"primary", "replica", "stranger"}) {
            TestCertificates.selfSigned(certs, who);
        }
    }

    private static Path crt(String who) {
        return certs.resolve(who + ".crt");
    }

    private static Path key(String who) {
        return certs.resolve(who + ".key");
    }

    private void assertStreams(Wal primary, ReplicationServer server, Wal replica, ReplicaClient client) throws Exception {
        waitUntil(() -> server.replica("r1").isPresent());
        server.policy(SyncPolicy.parse("FIRST 1 (r1)"));
        long lsn = primary.append("confirmed over the secured link".getBytes(), Durability.ON);
        assertThat(replica.flushedLsn()).isGreaterThan(lsn);
        assertThat(client.fatalError()).isNull();
    }

    /** Checks, for the time a refused or failing connection takes to happen, that nothing is accepted. */
    private static void assertNotAccepted(ReplicationServer server, ReplicaClient client) throws Exception {
        Eventually.holdsThroughout("nothing accepted", 700, () -> server.replicaStatus().isEmpty() && !client.isStreaming());
    }

    @Test
    void aPrimaryWithASecretRefusesAReplicaWithoutItOrWithAnotherForGoodAndAcceptsTheRightOne() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             Wal replica = Wal.open(config(work.resolve("r1")).logId(primary.status().logId()).build());
             ReplicationServer server = ReplicationServer.builder(primary).listen(ANY_LOOPBACK_PORT).secret("s3cret").start()) {
            try (ReplicaClient none = ReplicaClient.builder(replica, server.address(), "r1").start()) {
                waitUntil(() -> none.fatalError() != null);
                assertThat(none.fatalError()).contains("authentication failed").contains("missing");
            }
            try (ReplicaClient wrong = ReplicaClient.builder(replica, server.address(), "r1").secret("guess").start()) {
                waitUntil(() -> wrong.fatalError() != null);
                assertThat(wrong.fatalError()).contains("authentication failed").contains("wrong");
            }
            assertThat(server.replicaStatus()).isEmpty();
            try (ReplicaClient right = ReplicaClient.builder(replica, server.address(), "r1").secret("s3cret").start()) {
                assertStreams(primary, server, replica, right);
            }
        }
    }

    @Test
    void aReplicaStreamsOverTlsWhenItTrustsThePrimarysCertificate() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             Wal replica = Wal.open(config(work.resolve("r1")).logId(primary.status().logId()).build());
             ReplicationServer server = ReplicationServer.builder(primary).listen(ANY_LOOPBACK_PORT).secret("s3cret")
                     .tls(ReplicationTls.server(crt("primary"), key("primary"), null)).start();
             ReplicaClient client = ReplicaClient.builder(replica, server.address(), "r1").secret("s3cret")
                     .tls(ReplicationTls.client(crt("primary"), null, null)).start()) {
            assertStreams(primary, server, replica, client);
        }
    }

    @Test
    void aReplicaRefusesAPrimaryWhoseCertificateItDoesNotTrustAndAPlaintextReplicaIsNotServed() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             Wal replica = Wal.open(config(work.resolve("r1")).logId(primary.status().logId()).build());
             ReplicationServer server = ReplicationServer.builder(primary).listen(ANY_LOOPBACK_PORT)
                     .tls(ReplicationTls.server(crt("primary"), key("primary"), null)).start()) {
            try (ReplicaClient client = ReplicaClient.builder(replica, server.address(), "r1")
                    .tls(ReplicationTls.client(crt("stranger"), null, null)).start()) {
                assertNotAccepted(server, client);
                assertThat(client.lastError()).as("why, for the operator").isNotNull();
            }
            try (ReplicaClient plaintext = ReplicaClient.builder(replica, server.address(), "r1").start()) {
                assertNotAccepted(server, plaintext);
            }
        }
    }

    @Test
    void withMutualTlsOnlyAReplicaPresentingATrustedCertificateIsServed() throws Exception {
        try (Wal primary = Wal.open(config(work.resolve("p")).build());
             Wal replica = Wal.open(config(work.resolve("r1")).logId(primary.status().logId()).build());
             ReplicationServer server = ReplicationServer.builder(primary).listen(ANY_LOOPBACK_PORT)
                     .tls(ReplicationTls.server(crt("primary"), key("primary"), crt("replica"))).start()) {
            try (ReplicaClient anonymous = ReplicaClient.builder(replica, server.address(), "r1")
                    .tls(ReplicationTls.client(crt("primary"), null, null)).start()) {
                assertNotAccepted(server, anonymous);
            }
            try (ReplicaClient stranger = ReplicaClient.builder(replica, server.address(), "r1")
                    .tls(ReplicationTls.client(crt("primary"), crt("stranger"), key("stranger"))).start()) {
                assertNotAccepted(server, stranger);
            }
            try (ReplicaClient trusted = ReplicaClient.builder(replica, server.address(), "r1")
                    .tls(ReplicationTls.client(crt("primary"), crt("replica"), key("replica"))).start()) {
                assertStreams(primary, server, replica, trusted);
            }
        }
    }
}
