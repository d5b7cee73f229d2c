package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Named logs across a server's life on a running {@code walden.jar} (docs/operations.md, "Named logs"): they and the
 * settings they were given come back after a restart; walden.yaml declares logs, whose declared settings change only
 * there; {@code --auto-create-logs} and {@code --max-logs}. Their replication: NamedLogReplicationIT.
 */
class NamedLogsLifecycleIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path work;

    private static JsonNode json(HttpResponse<String> r, int status) throws Exception {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        return JSON.readTree(r.body());
    }

    private static HttpResponse<String> append(ServerProcess server, String log, String payload) throws Exception {
        return server.post("/v1/logs/" + log + "/records?durability=local", payload.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void logsTheirRecordsAndTheSettingsTheyWereGivenComeBackAfterARestart() throws Exception {
        Path data = work.resolve("data");
        int port = ServerProcess.freePort();
        try (ServerProcess server = ServerProcess.start(work, data, port)) {
            json(server.send("POST", "/v1/logs", "{\"name\": \"orders\", \"settings\": {\"retention-time\": \"7d\"}}"), 201);
            for (int i = 1; i <= 3; i++) {
                json(append(server, "orders", "order " + i), 200);
            }
            json(server.send("PATCH", "/v1/logs/orders", "{\"settings\": {\"durability\": \"local\"}}"), 200);
            assertThat(server.terminate()).isEqualTo(143);
        }
        try (ServerProcess server = ServerProcess.start(work, data, port)) {
            JsonNode settings = json(server.get("/v1/logs/orders"), 200).get("settings");
            assertThat(settings.get("retention-time").asText()).isEqualTo("7d");
            assertThat(settings.get("durability").asText()).isEqualTo("local");
            assertThat(server.records("/v1/logs/orders/records").values())
                    .containsExactly("order 1", "order 2", "order 3");
        }
    }

    @Test
    void declaredLogsAreCreatedAtStartAndTheirDeclaredSettingsChangeOnlyInTheFile() throws Exception {
        Path yaml = work.resolve("walden.yaml");
        Files.writeString(yaml, """
                logs:
                  audit: {retention-bytes: 1GiB, compression: zstd}
                """);
        try (ServerProcess server = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort(),
                "--config", yaml.toString())) {
            JsonNode audit = json(server.get("/v1/logs/audit"), 200).get("settings");
            assertThat(audit.get("retention-bytes").asText()).isEqualTo("1GiB");
            assertThat(audit.get("compression").asText()).isEqualTo("zstd");

            JsonNode refused = json(server.send("PATCH", "/v1/logs/audit",
                    "{\"settings\": {\"retention-bytes\": \"2GiB\"}}"), 409);
            assertThat(refused.get("error").asText()).isEqualTo("log_settings_fixed");
            assertThat(refused.get("detail").asText()).contains("walden.yaml").contains("retention-bytes");
            assertThat(json(server.send("PATCH", "/v1/logs/audit", "{\"settings\": {\"durability\": \"local\"}}"), 200)
                    .get("settings").get("durability").asText()).as("a setting the file leaves alone").isEqualTo("local");
        }
    }

    @Test
    void anAppendCreatesItsLogWhenAskedToUpToMaxLogs() throws Exception {
        try (ServerProcess server = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort(),
                "--auto-create-logs", "--max-logs", "3")) {
            assertThat(server.post("/v1/logs/refused/records?durability=sometimes", "x".getBytes()).statusCode())
                    .isEqualTo(400);
            assertThat(server.get("/v1/logs/refused").statusCode()).as("a refused append creates nothing").isEqualTo(404);
            json(append(server, "events", "first event"), 200);
            json(append(server, "clicks", "first click"), 200);

            JsonNode refused = json(append(server, "one-too-many", "refused"), 409);

            assertThat(refused.get("error").asText()).isEqualTo("too_many_logs");
            assertThat(server.records("/v1/logs/events/records").values()).containsExactly("first event");
            assertThat(server.get("/v1/logs/one-too-many").statusCode()).isEqualTo(404);
            assertThat(json(server.get("/v1/logs"), 200).get("logs")).hasSize(3);
        }
    }
}
