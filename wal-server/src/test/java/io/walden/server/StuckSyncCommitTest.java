package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Eventually;
import io.walden.server.config.ServerConfig;
import io.walden.server.contract.ContractCheckedClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Durable commits held by a synchronous policy whose replica never came (docs/http-api.md, "/ready" and the status): the
 * server stays ready, and says so where an operator looks, the status, the metrics and its log, once they waited 5 s.
 */
@Timeout(60)
@Execution(ExecutionMode.CONCURRENT) // beside the other test classes: it mostly waits out the 5 s after which the server warns
class StuckSyncCommitTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;
    private WaldenServer server;
    private final HttpClient http = ContractCheckedClient.create();

    @BeforeEach
    void start() throws Exception {
        server = new WaldenServer(ServerConfig.load(null, Map.of("data-dir", dir.resolve("log").toString(),
                "http", "127.0.0.1:0", "replication-listen", "127.0.0.1:0", "sync-replicas", "FIRST 1 (r1)"))).start();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.boundAddress().getPort() + path));
    }

    private JsonNode status() throws Exception {
        return JSON.readTree(http.send(request("/admin/status").build(), HttpResponse.BodyHandlers.ofString()).body());
    }

    @Test
    void commitsWaitingForAMissingReplicaShowInTheStatusTheMetricsAndTheLogAndClearOnceReleased() throws Exception {
        CompletableFuture<HttpResponse<String>> waiting = http.sendAsync(request("/v1/records?durability=on")
                .POST(HttpRequest.BodyPublishers.ofString("held")).build(), HttpResponse.BodyHandlers.ofString());
        Eventually.waitUntil(15, () -> !status().get("remote_wait_warning").isNull());
        JsonNode s = status();
        assertThat(s.get("remote_wait_oldest_ms").asLong()).isGreaterThanOrEqualTo(5000);
        assertThat(s.get("remote_wait_warning").asText()).contains("waited").contains("synchronous replicas");
        assertThat(http.send(request("/ready").build(), HttpResponse.BodyHandlers.ofString()).statusCode())
                .as("the server still serves").isEqualTo(200);
        String metrics = http.send(request("/metrics").build(), HttpResponse.BodyHandlers.ofString()).body();
        assertThat(metrics).containsPattern("walden_remote_wait_oldest_seconds\\{log=\"default\"} [5-9]");
        assertThat(waiting).isNotDone();

        http.send(request("/admin/sync-replicas").PUT(HttpRequest.BodyPublishers.ofString("")).build(),
                HttpResponse.BodyHandlers.ofString()); // no policy: the held commit is released as local
        assertThat(waiting.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        Eventually.waitUntil(5, () -> status().get("remote_wait_warning").isNull());
        assertThat(status().get("remote_wait_oldest_ms").asLong()).isZero();
    }
}
