package io.walden.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Lsn;
import io.walden.core.internal.recovery.HistoryFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A replica promoted by hand (POST /admin/promote), as jar processes: what it acknowledges afterwards stays readable
 * across a SIGKILL and restarts, and reaches a new replica of it (docs/replication.md, "Shipping before the flush").
 */
class PromotionIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aReplicaPromotedByHandThenKilledKeepsEveryRecordItAcknowledgedReadableAndShipsThemToANewReplica(@TempDir Path work)
            throws Exception {
        int primaryReplication = ServerProcess.freePort();
        int replicaHttp = ServerProcess.freePort();
        int replicaReplication = ServerProcess.freePort();
        Path replicaDir = work.resolve("replica");
        Map<Long, String> acknowledged = new TreeMap<>();
        try (ServerProcess primary = ServerProcess.start(work, work.resolve("primary"), ServerProcess.freePort(),
                "--replication-listen", "127.0.0.1:" + primaryReplication, "--durability", "local")) {
            for (int i = 0; i < 100; i++) {
                acknowledged.put(append(primary, "before " + i), "before " + i);
            }
            try (ServerProcess replica = replicaOf(work, replicaDir, replicaHttp, replicaReplication, primaryReplication)) {
                waitUntil(() -> replica.records().size() == 100);
                replica.terminate(); // its shutdown checkpoint records its read limit, as its periodic ones would have
            }
            // Restarted with checkpoints held back: only the promotion can tell the control file the limit is gone.
            try (ServerProcess replica = replicaOf(work, replicaDir, replicaHttp, replicaReplication, primaryReplication,
                    "--checkpoint-interval", "1h")) {
                waitUntil(() -> replica.records().size() == 100);
                HttpResponse<String> promoted = replica.post("/admin/promote", new byte[0]);
                assertThat(promoted.statusCode()).as(promoted.body()).isEqualTo(200);
                for (int i = 0; i < 50; i++) {
                    acknowledged.put(append(replica, "after " + i), "after " + i);
                }
                replica.kill();
            }
        }
        try (ServerProcess restarted = ServerProcess.start(work, replicaDir, replicaHttp,
                "--replication-listen", "127.0.0.1:" + replicaReplication, "--durability", "local", "--checkpoint-interval", "1h")) {
            assertThat(restarted.records()).as("every acknowledged record, after kill -9 and restart").isEqualTo(acknowledged);
            acknowledged.put(append(restarted, "after the restart"), "after the restart");
            assertThat(restarted.records()).as("an append after the restart reads back").isEqualTo(acknowledged);
            try (ServerProcess fresh = replicaOf(work, work.resolve("fresh"), ServerProcess.freePort(), ServerProcess.freePort(),
                    replicaReplication)) {
                waitUntil(() -> fresh.records().size() == acknowledged.size());
                assertThat(fresh.records()).as("a new replica gets past the promotion point").isEqualTo(acknowledged);
            }
            restarted.terminate();
        }
        try (ServerProcess again = ServerProcess.start(work, replicaDir, replicaHttp,
                "--replication-listen", "127.0.0.1:" + replicaReplication)) {
            assertThat(again.records()).as("a clean restart after the crash brings no read limit back").isEqualTo(acknowledged);
        }
    }

    @Test
    void aReplicaStartedWithoutReplicateFromIsRefusedNamingHowToPromoteIt(@TempDir Path work) throws Exception {
        int primaryReplication = ServerProcess.freePort();
        Path replicaDir = work.resolve("replica");
        try (ServerProcess primary = ServerProcess.start(work, work.resolve("primary"), ServerProcess.freePort(),
                "--replication-listen", "127.0.0.1:" + primaryReplication, "--durability", "local");
             ServerProcess replica = replicaOf(work, replicaDir, ServerProcess.freePort(), ServerProcess.freePort(),
                     primaryReplication)) {
            append(primary, "from the primary");
            waitUntil(() -> replica.records().size() == 1);
            replica.kill(); // a crash, then a restart whose configuration lost --replicate-from
        }
        WaldenJar.Run alone = WaldenJar.run(work, "serve", "--data-dir", replicaDir.toString(), "--http", "127.0.0.1:0",
                "--replication-listen", "none");
        assertThat(alone.exitCode()).as(alone.stdout() + alone.stderr()).isEqualTo(2);
        assertThat(alone.stderr()).contains("is a replica's").contains("--replicate-from").contains("POST /admin/promote");
        assertThat(HistoryFile.read(replicaDir).current().number())
                .as("no epoch began on its own").isEqualTo(1);
    }

    private static ServerProcess replicaOf(Path work, Path dir, int http, int replication, int primaryReplication,
                                           String... extra) throws Exception {
        String[] args = new String[6 + extra.length];
        System.arraycopy(new String[]{"--replicate-from", "127.0.0.1:" + primaryReplication, "--replication-listen",
                "127.0.0.1:" + replication, "--durability", "local"}, 0, args, 0, 6);
        System.arraycopy(extra, 0, args, 6, extra.length);
        return ServerProcess.start(work, dir, http, args);
    }

    private static long append(ServerProcess server, String payload) throws Exception {
        HttpResponse<String> r = server.post("/v1/records", payload.getBytes(StandardCharsets.UTF_8));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return Lsn.parse(JSON.readTree(r.body()).get("lsn").asText());
    }
}
