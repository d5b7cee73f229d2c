package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Lsn;
import io.walden.server.cli.WaldenCli;
import io.walden.server.config.ServerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A cluster whose servers archive to one location (docs/cluster.md, "Archives"): a log archives under
 * {@code logs/<log>/} whichever server leads it, across a failover, so that a restore from there brings back every
 * record it acknowledged in both epochs; each server's own log {@code default} archives under {@code servers/<name>/},
 * apart from the other servers'.
 */
@Timeout(90)
@Execution(ExecutionMode.CONCURRENT) // beside the other test classes: it mostly waits on ZooKeeper and Helix
class ClusterArchiveTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path work;
    private InProcessCluster cluster;

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
    }

    private String archive() {
        return work.resolve("archive").toUri().toString();
    }

    private void start(String name) throws InterruptedException {
        cluster.start(name, Map.of("segment-size", Integer.toString(64 << 10), "archive-to", archive(),
                "archive-timeout", "1s"));
    }

    private HttpResponse<String> send(String server, String method, String path, String body) throws Exception {
        return cluster.send(server, method, path, body);
    }

    private JsonNode json(String server, String path) throws Exception {
        return cluster.json(server, path);
    }

    /** Appends {@code n} records of about 2 KB to log orders at {@code on} through {@code server}, each acknowledged. */
    private void append(String server, int n, List<String> acknowledged) throws Exception {
        for (int i = 0; i < n; i++) {
            String payload = acknowledged.size() + ":" + "o".repeat(2000);
            HttpResponse<String> r = send(server, "POST", "/v1/logs/orders/records?durability=on", payload);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            acknowledged.add(payload);
        }
    }

    private static List<String> files(Path dir) throws Exception {
        try (Stream<Path> all = Files.walk(dir)) {
            return all.filter(Files::isRegularFile).map(p -> dir.relativize(p).toString()).sorted().toList();
        }
    }

    @Test
    void aLogArchivesInOnePlaceAcrossAFailoverAndEachServersDefaultLogApartFromTheOthers() throws Exception {
        cluster = new InProcessCluster(work);
        start("s1");
        start("s2");
        HttpResponse<String> created = send("s1", "POST", "/v1/logs", "{\"name\": \"orders\", \"settings\": {\"replicas\": 2}}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        String first = JSON.readTree(created.body()).get("primary").asText();
        String second = first.equals("s1") ? "s2" : "s1";
        waitUntil(30, () -> json(first, "/admin/cluster").get("logs").get("orders").get("in_sync").size() == 2);
        for (String s : cluster.names()) { // each server's own log, not the cluster's
            assertThat(send(s, "POST", "/v1/records?durability=local", "default of " + s).statusCode()).isEqualTo(200);
            waitUntil(30, () -> {
                JsonNode status = json(s, "/admin/status");
                return Lsn.parse(status.get("archive").get("archived_lsn").asText())
                        >= Lsn.parse(status.get("flushed_lsn").asText());
            });
        }
        List<String> acknowledged = new ArrayList<>();
        append(first, 60, acknowledged); // about two segments

        cluster.stop(first);
        waitUntil(60, () -> second.equals(json(second, "/v1/logs/orders").path("primary").asText())
                && send(second, "POST", "/v1/logs/orders/records?durability=on", "x").statusCode() == 200);
        acknowledged.add("x");
        append(second, 60, acknowledged); // in the new primary's epoch
        waitUntil(30, () -> {
            JsonNode orders = json(second, "/v1/logs/orders");
            return Lsn.parse(orders.get("archive").get("archived_lsn").asText())
                    >= Lsn.parse(orders.get("flushed_lsn").asText());
        });

        Path archived = work.resolve("archive");
        assertThat(files(archived)).as("nothing at the location itself: each log under its own prefix")
                .allMatch(f -> f.startsWith("logs/orders/") || f.startsWith("servers/s1/") || f.startsWith("servers/s2/"));
        assertThat(files(archived.resolve("servers/s1"))).isNotEmpty();
        assertThat(files(archived.resolve("servers/s2"))).isNotEmpty();

        Path restored = work.resolve("restored");
        assertThat(WaldenCli.commandLine().execute("restore", "--from", archive(), "--data-dir", restored.toString(),
                "--log", "orders")).isZero();
        try (WaldenServer fromArchive = new WaldenServer(ServerConfig.load(null, Map.of("data-dir", restored.toString(),
                "http", "127.0.0.1:0", "replication-listen", "127.0.0.1:0"))).start()) {
            assertThat(records(fromArchive)).as("every record the log acknowledged, in both epochs").isEqualTo(acknowledged);
        }
    }

    /** Every record of log orders that {@code server} serves, in LSN order. */
    private List<String> records(WaldenServer server) throws Exception {
        return new ArrayList<>(RecordPages.read(path -> cluster.send(server, "GET", path, ""), "/v1/logs/orders/records")
                .values());
    }
}
