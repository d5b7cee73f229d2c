package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Named logs replicated on running {@code walden.jar}s (docs/operations.md, "Named logs"): a {@code --replicate-from}
 * replica holds every log of its primary, created before it connected, while it is connected or while it was down, and
 * drops the ones its primary deletes; a synchronous commit on a named log waits for the replica as one on
 * {@code default} does; a log a replica's slot still needs is deleted only when forced.
 */
class NamedLogReplicationIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path work;

    private static JsonNode json(HttpResponse<String> r, int status) throws Exception {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        return JSON.readTree(r.body());
    }

    private static HttpResponse<String> append(ServerProcess server, String log, String durability, String payload)
            throws Exception {
        return server.post("/v1/logs/" + log + "/records?durability=" + durability,
                payload.getBytes(StandardCharsets.UTF_8));
    }

    /** The names of the server's logs, {@code default} first. */
    private static List<String> logs(ServerProcess server) throws Exception {
        List<String> names = new ArrayList<>();
        json(server.get("/v1/logs"), 200).get("logs").forEach(l -> names.add(l.get("name").asText()));
        return names;
    }

    @Test
    void aReplicaHoldsEveryLogAndAnOnCommitOnANamedLogWaitsForIt() throws Exception {
        int replicationPort = ServerProcess.freePort();
        try (ServerProcess primary = ServerProcess.start(work, work.resolve("primary"), ServerProcess.freePort(),
                "--replication-listen", "127.0.0.1:" + replicationPort, "--sync-replicas", "FIRST 1 (r1)",
                "--remote-commit-timeout-ms", "1500")) {
            json(primary.send("POST", "/v1/logs", "{\"name\": \"before\", \"settings\": {\"retention-time\": \"7d\"}}"), 201);
            json(append(primary, "before", "local", "made before the replica"), 200);
            try (ServerProcess replica = ServerProcess.start(work, work.resolve("replica"), ServerProcess.freePort(),
                    "--replicate-from", "127.0.0.1:" + replicationPort, "--name", "r1")) {
                waitUntil(() -> replica.get("/v1/logs/before").statusCode() == 200);
                json(primary.send("POST", "/v1/logs", "{\"name\": \"orders\"}"), 201);
                waitUntil(() -> replica.get("/v1/logs/orders").statusCode() == 200); // copied while connected

                for (int i = 1; i <= 5; i++) { // each waits for r1's flush of log orders
                    json(append(primary, "orders", "on", "order " + i), 200);
                }

                waitUntil(() -> replica.records("/v1/logs/orders/records").equals(
                        primary.records("/v1/logs/orders/records")));
                assertThat(replica.records("/v1/logs/before/records").values()).containsExactly("made before the replica");
                assertThat(json(replica.get("/v1/logs/before"), 200).at("/settings/retention-time").asText())
                        .as("the copy takes its primary's settings").isEqualTo("7d");
                assertThat(json(primary.get("/v1/logs/orders"), 200).get("replicated").asBoolean()).isTrue();
                // A PATCH: r1 keeps its copy (a file put in its directory stays), takes the new settings, and goes on.
                Path copy = work.resolve("replica").resolve("logs").resolve("before");
                Files.writeString(copy.resolve("kept-by-r1"), "a copy deleted and made again would lose this file");
                json(primary.send("PATCH", "/v1/logs/before", "{\"settings\": {\"retention-time\": \"14d\"}}"), 200);
                json(append(primary, "before", "on", "after its settings changed"), 200);
                waitUntil(() -> replica.records("/v1/logs/before/records").values().contains("after its settings changed"));
                assertThat(replica.records("/v1/logs/before/records")).isEqualTo(primary.records("/v1/logs/before/records"));
                waitUntil(() -> json(replica.get("/v1/logs/before"), 200).at("/settings/retention-time").asText().equals("14d"));
                assertThat(copy.resolve("kept-by-r1")).as("r1 kept its copy of the log").exists();
                JsonNode refused = json(replica.send("POST", "/v1/logs", "{\"name\": \"own\"}"), 409);
                assertThat(refused.get("error").asText()).isEqualTo("not_a_primary");
                assertThat(append(replica, "orders", "local", "not here").statusCode()).isEqualTo(409);

                JsonNode held = json(primary.send("DELETE", "/v1/logs/orders"), 409);
                assertThat(held.get("error").asText()).isEqualTo("log_held");
                assertThat(held.get("detail").asText()).contains("r1");
                assertThat(primary.send("DELETE", "/v1/logs/orders?force=true").statusCode()).isEqualTo(204);
                waitUntil(() -> replica.get("/v1/logs/orders").statusCode() == 404);
                assertThat(logs(replica)).containsExactly("default", "before");

                assertThat(replica.terminate()).isEqualTo(143);
            }
            HttpResponse<String> unconfirmed = append(primary, "before", "on", "no replica to confirm it");
            assertThat(unconfirmed.statusCode()).as("with r1 gone, an on commit waits for it, then times out")
                    .isEqualTo(503);
            assertThat(unconfirmed.body()).contains("remote_commit_timeout");
        }
    }

    @Test
    void aReplicaThatWasDownWhileLogsWereCreatedAndDeletedCatchesUpToExactlyThePrimarysSet() throws Exception {
        int replicationPort = ServerProcess.freePort();
        Path replicaDir = work.resolve("replica");
        String[] replicaArgs = {"--replicate-from", "127.0.0.1:" + replicationPort, "--name", "r1"};
        try (ServerProcess primary = ServerProcess.start(work, work.resolve("primary"), ServerProcess.freePort(),
                "--replication-listen", "127.0.0.1:" + replicationPort)) {
            for (String log : List.of("kept", "deleted", "recreated")) {
                json(primary.send("POST", "/v1/logs", "{\"name\": \"" + log + "\"}"), 201);
                json(append(primary, log, "local", "first of " + log), 200);
            }
            int replicaHttp = ServerProcess.freePort();
            try (ServerProcess replica = ServerProcess.start(work, replicaDir, replicaHttp, replicaArgs)) {
                waitUntil(() -> logs(replica).equals(logs(primary))
                        && replica.records("/v1/logs/recreated/records").size() == 1);
                assertThat(replica.terminate()).isEqualTo(143);
            }

            assertThat(primary.send("DELETE", "/v1/logs/deleted?force=true").statusCode()).isEqualTo(204);
            assertThat(primary.send("DELETE", "/v1/logs/recreated?force=true").statusCode()).isEqualTo(204);
            json(primary.send("POST", "/v1/logs", "{\"name\": \"recreated\"}"), 201);
            json(primary.send("POST", "/v1/logs", "{\"name\": \"created\"}"), 201);
            for (String log : List.of("kept", "recreated", "created")) {
                json(append(primary, log, "local", "while r1 was down, to " + log), 200);
            }

            try (ServerProcess replica = ServerProcess.start(work, replicaDir, replicaHttp, replicaArgs)) {
                waitUntil(() -> logs(replica).equals(logs(primary))
                        && replica.records("/v1/logs/created/records").size() == 1
                        && replica.records("/v1/logs/recreated/records").size() == 1
                        && replica.records("/v1/logs/kept/records").size() == 2);
                assertThat(logs(replica)).containsExactly("default", "created", "kept", "recreated");
                for (String log : List.of("kept", "recreated", "created")) {
                    assertThat(replica.records("/v1/logs/" + log + "/records"))
                            .isEqualTo(primary.records("/v1/logs/" + log + "/records"));
                }
            }
        }
    }
}
