package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.client.ApiClient;
import io.walden.client.api.DataApi;
import io.walden.client.model.Durability;
import io.walden.server.cli.WaldenCli;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.io.TempDir;

import java.net.ConnectException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code walden serve --cluster} (docs/cluster.md): three servers in this JVM, on real HTTP, replication over TCP and a
 * real ZooKeeper. A log created at any server is placed by Helix; any server answers for it (307 to its primary, which
 * the client follows); when its primary's server stops, another leads it with every acknowledged record.
 */
@Timeout(60)
@Execution(ExecutionMode.CONCURRENT) // beside the other test classes: it mostly waits on ZooKeeper and Helix
class ClusterServeTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path work;
    private InProcessCluster cluster;

    @BeforeEach
    void threeServersJoinACluster() throws Exception {
        cluster = new InProcessCluster(work);
        for (String name : List.of("s1", "s2", "s3")) {
            cluster.start(name, Map.of("segment-size", Integer.toString(1 << 20)));
        }
    }

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    private String url(String server, String path) {
        return cluster.url(server, path);
    }

    private HttpResponse<String> post(String server, String path, String body) throws Exception {
        return cluster.post(server, path, body);
    }

    private HttpResponse<String> get(String server, String path) throws Exception {
        return cluster.get(server, path);
    }

    /** Every record of {@code log} as {@code server} serves it (through a redirect to its primary), in LSN order. */
    private List<String> records(String server, String log) throws Exception {
        return new ArrayList<>(RecordPages.read(path -> get(server, path), "/v1/logs/" + log + "/records").values());
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
        assertThat(cluster.names()).contains(primary);
        HttpResponse<String> badSettings = post("s2", "/v1/logs",
                "{\"name\": \"bad\", \"settings\": {\"segment-size\": \"64KiB\", \"max-record-size\": \"1MiB\"}}");
        assertThat(badSettings.statusCode()).as(badSettings.body()).isEqualTo(400); // refused whole, where it arrived
        assertThat(JSON.readTree(get("s2", "/admin/cluster").body()).get("logs").has("bad")).isFalse();
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
        String leader = primary;
        String elsewhere = cluster.names().stream().filter(s -> !s.equals(leader)).findFirst().orElseThrow();
        Path lines = Files.writeString(work.resolve("lines.txt"), "from the console 1\nfrom the console 2\n");
        assertThat(WaldenCli.commandLine().execute("append", "--url", url(elsewhere, ""), "--log", "orders",
                "--durability", "on", "--file", lines.toString(), "--quiet")).as("walden append through %s", elsewhere)
                .isZero(); // the console tools follow the 307 to the primary
        acknowledged.addAll(List.of("from the console 1", "from the console 2"));
        Path body = Files.writeString(work.resolve("body.bin"), "from the generated client");
        assertThat(new DataApi(new ApiClient().setBasePath(url(elsewhere, ""))).appendToLog("orders", body.toFile(),
                Durability.ON, null, null).getLsn()).as("the generated client follows the 307 too").isNotEmpty();
        acknowledged.add("from the generated client");
        JsonNode view = JSON.readTree(get("s2", "/admin/cluster").body());
        assertThat(view.get("logs").get("orders").get("primary").asText()).isEqualTo(primary);
        assertThat(view.get("servers")).hasSize(3);
        for (String s : cluster.names()) { // each server lists the log, held there or not, with where it is
            JsonNode listed = JSON.readTree(get(s, "/v1/logs").body());
            JsonNode entry = null;
            for (JsonNode l : listed.get("logs")) {
                entry = l.get("name").asText().equals("orders") ? l : entry;
            }
            for (JsonNode l : listed.get("elsewhere")) {
                entry = l.get("name").asText().equals("orders") ? l : entry;
            }
            assertThat(entry).as("orders in GET /v1/logs at %s: %s", s, listed).isNotNull();
            assertThat(entry.get("primary").asText()).isEqualTo(primary);
        }
        JsonNode status = JSON.readTree(get("s3", "/admin/status").body()).get("cluster"); // the status page's
        assertThat(status.get("servers")).hasSize(3);
        assertThat(status.get("logs").get("orders").get("primary").asText()).isEqualTo(primary);

        HttpResponse<String> threeCopies = cluster.send(elsewhere, "PATCH", "/v1/logs/orders",
                "{\"settings\": {\"replicas\": 3}}");
        assertThat(threeCopies.statusCode()).as(threeCopies.body()).isEqualTo(200); // redirected to the primary
        waitUntil(() -> JSON.readTree(get("s1", "/admin/cluster").body()).get("logs").get("orders").get("in_sync")
                .size() == 3); // a third copy placed, caught up, in sync

        cluster.stop(primary); // its server stops
        String survivor = cluster.names().iterator().next();
        long stopped = System.nanoTime();
        assertThat(appendWithRetries(survivor, "after the stop")).isTrue();
        System.out.printf("ClusterServeTest: log orders took an ON append again %d ms after its primary %s stopped%n",
                (System.nanoTime() - stopped) / 1_000_000, primary);
        for (String s : cluster.names()) {
            assertThat(records(s, "orders")).as("through %s", s).containsAll(acknowledged).contains("after the stop");
        }
    }

    @Test
    void aDrainedServerHandsItsLogsToTheOthersWithEveryRecordAndTheLogKeepsTheSettingsItWasCreatedWith() throws Exception {
        HttpResponse<String> created = post("s1", "/v1/logs",
                "{\"name\": \"orders\", \"settings\": {\"replicas\": 2, \"retention-time\": \"7d\"}}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        assertThat(JSON.readTree(created.body()).get("settings").get("retention-time").asText()).isEqualTo("7d");
        waitUntil(() -> {
            JsonNode log = JSON.readTree(get("s1", "/admin/cluster").body()).get("logs").get("orders");
            return log.get("in_sync").size() == 2 && log.get("moves").isEmpty();
        });
        List<String> acknowledged = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            assertThat(appendWithRetries("s1", "order " + i)).isTrue();
            acknowledged.add("order " + i);
        }
        String drained = JSON.readTree(get("s1", "/admin/cluster").body()).get("logs").get("orders").get("primary").asText();

        HttpResponse<String> started = post(drained, "/admin/drain", "");
        assertThat(started.statusCode()).as(started.body()).isEqualTo(202);
        assertThat(JSON.readTree(started.body()).get("draining").asBoolean()).isTrue();
        waitUntil(() -> get(drained, "/admin/drain").statusCode() == 200);

        JsonNode done = JSON.readTree(get(drained, "/admin/drain").body());
        assertThat(done.get("logs").asInt()).isZero();
        assertThat(done.get("done").asBoolean()).isTrue();
        JsonNode view = JSON.readTree(get(drained, "/admin/cluster").body());
        JsonNode orders = view.get("logs").get("orders");
        assertThat(orders.get("primary").asText()).isNotEqualTo(drained);
        assertThat(orders.get("replicas").toString()).doesNotContain(drained);
        String other = cluster.names().stream().filter(s -> !s.equals(drained)).findFirst().orElseThrow();
        assertThat(appendWithRetries(other, "after the drain")).isTrue();
        assertThat(records(other, "orders")).containsAll(acknowledged).contains("after the drain");
        JsonNode described = JSON.readTree(get(other, "/v1/logs/orders").body()); // at the new primary, a former replica
        assertThat(described.get("settings").get("retention-time").asText()).isEqualTo("7d");

        HttpResponse<String> ended = cluster.send(drained, "DELETE", "/admin/drain", "");
        assertThat(ended.statusCode()).as(ended.body()).isEqualTo(200);
        assertThat(JSON.readTree(ended.body()).get("draining").asBoolean()).isFalse();
    }
}
