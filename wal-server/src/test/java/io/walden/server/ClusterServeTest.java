package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.server.config.ServerConfig;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code walden serve --cluster} (docs/cluster.md): three servers in this JVM, on real HTTP, replication over TCP and a
 * real ZooKeeper. A log created at any server is placed by Helix; any server answers for it (307 to its primary, which
 * the client follows); when its primary's server stops, another leads it with every acknowledged record.
 */
@Timeout(60)
class ClusterServeTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path work;
    private TestingServer zk;
    private final Map<String, WaldenServer> servers = new TreeMap<>();
    private final HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NORMAL)
            .connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeEach
    void threeServersJoinACluster() throws Exception {
        zk = new TestingServer(true);
        for (String name : List.of("s1", "s2", "s3")) {
            servers.put(name, new WaldenServer(ServerConfig.load(null, Map.of("data-dir", work.resolve(name).toString(),
                    "http", "127.0.0.1:0", "replication-listen", "127.0.0.1:0", "name", name,
                    "cluster", "zk://" + zk.getConnectString() + "/walden/test", "segment-size", Integer.toString(1 << 20))))
                    .start());
        }
    }

    @AfterEach
    void stop() throws Exception {
        for (WaldenServer s : servers.values()) {
            s.close();
        }
        zk.close();
    }

    private String url(String server, String path) {
        WaldenServer s = servers.get(server);
        return "http://127.0.0.1:" + s.boundAddress().getPort() + path;
    }

    private HttpResponse<String> post(String server, String path, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url(server, path))).timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String server, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url(server, path))).timeout(Duration.ofSeconds(30)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Every record of {@code log} as {@code server} serves it (through a redirect to its primary), in LSN order. */
    private List<String> records(String server, String log) throws Exception {
        List<String> out = new ArrayList<>();
        String from = null;
        while (true) {
            JsonNode page = JSON.readTree(get(server, "/v1/logs/" + log + "/records?limit=1000"
                    + (from == null ? "" : "&from=" + from)).body());
            for (JsonNode r : page.get("records")) {
                out.add(new String(Base64.getDecoder().decode(r.get("data").asText()), StandardCharsets.UTF_8));
            }
            if (page.get("records").isEmpty()) {
                return out;
            }
            from = page.get("next").asText();
        }
    }

    /**
     * Appends at {@code on} through {@code server} as a client of a cluster does while its log moves: an append refused
     * unwritten (409 {@code replica}, 503 {@code shutting_down}) or not confirmed by the replicas of a primary that handed
     * the log over (503 {@code remote_commit_unconfirmed}: it may be there, once more) is sent again, and so is one
     * redirected to a primary that has just stopped (refused connection: {@code server} still names it until Helix
     * promotes another copy); true once one is acknowledged.
     */
    private boolean appendWithRetries(String server, String payload) throws Exception {
        for (int attempt = 0; attempt < 100; attempt++) {
            HttpResponse<String> appended;
            try {
                appended = post(server, "/v1/logs/orders/records?durability=on", payload);
            } catch (ConnectException redirectedToAStoppedServer) {
                Thread.sleep(100);
                continue;
            }
            if (appended.statusCode() == 200) {
                return true;
            }
            String error = JSON.readTree(appended.body()).path("error").asText();
            if (!error.equals("replica") && !error.equals("shutting_down") && !error.equals("remote_commit_unconfirmed")) {
                throw new AssertionError("append through " + server + ": " + appended.statusCode() + " " + appended.body());
            }
            Thread.sleep(100);
        }
        return false;
    }

    @Test
    void aLogCreatedAtAnyServerIsWrittenThroughEveryServerAndSurvivesItsPrimarysStop() throws Exception {
        long creating = System.nanoTime();
        HttpResponse<String> created = post("s1", "/v1/logs", "{\"name\": \"orders\", \"settings\": {\"replicas\": 2}}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        System.out.printf("ClusterServeTest: POST /v1/logs answered once a server led the log, after %d ms%n",
                (System.nanoTime() - creating) / 1_000_000);
        JsonNode where = JSON.readTree(created.body());
        String primary = where.get("primary").asText();
        assertThat(servers).containsKey(primary);
        HttpResponse<String> again = post("s3", "/v1/logs", "{\"name\": \"orders\"}");
        assertThat(again.statusCode()).as(again.body()).isEqualTo(409);
        assertThat(JSON.readTree(again.body()).get("error").asText()).isEqualTo("log_exists");

        // Helix may hand the new log to another server once more (docs/cluster.md, "The rebalancer"): wait until it settled.
        waitUntil(() -> {
            JsonNode log = JSON.readTree(get("s3", "/admin/cluster").body()).get("logs").get("orders");
            return log.get("in_sync").size() == 2 && log.get("moves").isEmpty() && log.get("leader").asText()
                    .equals(log.get("primary").asText());
        });
        primary = JSON.readTree(get("s3", "/admin/cluster").body()).get("logs").get("orders").get("primary").asText();
        assertThat(JSON.readTree(get(primary, "/v1/logs/orders").body()).get("replicas")).hasSize(1);
        List<String> acknowledged = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            String through = "s" + (1 + i % 3); // two in three are redirected to the primary
            assertThat(appendWithRetries(through, "order " + i)).as("append %d through %s", i, through).isTrue();
            acknowledged.add("order " + i);
        }
        JsonNode cluster = JSON.readTree(get("s2", "/admin/cluster").body());
        assertThat(cluster.get("logs").get("orders").get("primary").asText()).isEqualTo(primary);
        assertThat(cluster.get("servers")).hasSize(3);

        servers.remove(primary).close(); // its server stops
        String survivor = servers.keySet().iterator().next();
        long stopped = System.nanoTime();
        assertThat(appendWithRetries(survivor, "after the stop")).isTrue();
        System.out.printf("ClusterServeTest: log orders took an ON append again %d ms after its primary %s stopped%n",
                (System.nanoTime() - stopped) / 1_000_000, primary);
        for (String s : servers.keySet()) {
            assertThat(records(s, "orders")).as("through %s", s).containsAll(acknowledged).contains("after the stop");
        }
    }
}
