package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Named logs over HTTP on a running {@code walden.jar} (docs/http-api.md, "Logs"): created, listed, described, appended
 * to and read, changed and deleted, each log apart from the others and from {@code default}. One server serves the
 * class's tests, each on logs of its own names.
 */
class NamedLogsIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path work;
    private static ServerProcess server;

    @BeforeAll
    static void start() throws Exception {
        server = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort());
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    private static HttpResponse<String> create(String name, String settings) throws Exception {
        return server.send("POST", "/v1/logs", "{\"name\": \"" + name + "\"" + (settings == null ? "" : ", \"settings\": "
                + settings) + "}");
    }

    private static String append(String log, String payload) throws Exception {
        HttpResponse<String> r = server.post("/v1/logs/" + log + "/records?durability=local",
                payload.getBytes(StandardCharsets.UTF_8));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body()).get("lsn").asText();
    }

    private static JsonNode json(HttpResponse<String> r, int status) throws Exception {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        return JSON.readTree(r.body());
    }

    @Test
    void aCreatedLogTakesItsOwnRecordsApartFromTheOthers() throws Exception {
        JsonNode created = json(create("orders", "{\"retention-time\": \"7d\", \"durability\": \"local\"}"), 201);
        assertThat(created.get("name").asText()).isEqualTo("orders");
        assertThat(created.get("settings").get("retention-time").asText()).isEqualTo("7d");
        assertThat(created.get("settings").get("durability").asText()).isEqualTo("local");
        json(create("payments", null), 201);

        append("orders", "order 1");
        append("orders", "order 2");
        append("payments", "payment 1");

        assertThat(server.records("/v1/logs/orders/records").values()).containsExactly("order 1", "order 2");
        assertThat(server.records("/v1/logs/payments/records").values()).containsExactly("payment 1");
        assertThat(server.records("/v1/records").values()).doesNotContain("order 1", "payment 1");
    }

    @Test
    void theLogDefaultIsTodaysPathsUnderItsName() throws Exception {
        String lsn = JSON.readTree(server.post("/v1/records?durability=local", "in default".getBytes()).body())
                .get("lsn").asText();

        JsonNode page = json(server.get("/v1/logs/default/records?from=" + lsn), 200);

        assertThat(new String(java.util.Base64.getDecoder().decode(page.get("records").get(0).get("data").asText())))
                .isEqualTo("in default");
        assertThat(json(server.get("/v1/logs/default"), 200).get("replicated").asBoolean()).isTrue();
    }

    @Test
    void creatingALogThatExistsIsRefusedWithLogExists() throws Exception {
        json(create("twice", null), 201);

        JsonNode again = json(create("twice", "{\"durability\": \"off\"}"), 409);

        assertThat(again.get("error").asText()).isEqualTo("log_exists");
        assertThat(json(server.get("/v1/logs/twice"), 200).get("settings").get("durability").asText()).isEqualTo("on");
    }

    @Test
    void anUnknownLogIsNotFoundOnEveryPath() throws Exception {
        for (HttpResponse<String> r : List.of(server.get("/v1/logs/nowhere"),
                server.get("/v1/logs/nowhere/records"),
                server.post("/v1/logs/nowhere/records", "x".getBytes()),
                server.get("/v1/logs/nowhere/cursors"),
                server.send("PATCH", "/v1/logs/nowhere", "{\"settings\": {\"durability\": \"off\"}}"),
                server.send("DELETE", "/v1/logs/nowhere", null))) {
            assertThat(json(r, 404).get("error").asText()).as(r.uri().toString()).isEqualTo("log_not_found");
        }
    }

    @Test
    void aBadNameOrSettingIsA400AndCreatesNothing() throws Exception {
        assertThat(json(create("Upper Case", null), 400).get("error").asText()).isEqualTo("bad_parameter");
        JsonNode unknown = json(create("typo", "{\"retention-tim\": \"7d\"}"), 400);
        assertThat(unknown.get("detail").asText()).contains("retention-tim").contains("retention-time");
        assertThat(json(create("typo", "{\"durability\": \"sometimes\"}"), 400).get("detail").asText())
                .contains("durability");
        assertThat(server.get("/v1/logs/typo").statusCode()).isEqualTo(404);
    }

    @Test
    void theListShowsEveryLogDefaultFirstWithItsPositionsAndSize() throws Exception {
        json(create("listed", null), 201);
        append("listed", "one");

        JsonNode logs = json(server.get("/v1/logs"), 200).get("logs");

        assertThat(logs.get(0).get("name").asText()).isEqualTo("default");
        List<String> names = new ArrayList<>();
        logs.forEach(l -> names.add(l.get("name").asText()));
        assertThat(names).contains("listed");
        JsonNode listed = logs.get(names.indexOf("listed"));
        assertThat(listed.get("bytes").asLong()).isPositive();
        assertThat(listed.get("flushed_lsn").asText()).isNotEqualTo("0/0");
        assertThat(listed.has("append_rate")).isTrue();
    }

    @Test
    void patchChangesALiveSettingAndTheLogKeepsItsRecords() throws Exception {
        json(create("patched", null), 201);
        append("patched", "before");

        JsonNode changed = json(server.send("PATCH", "/v1/logs/patched",
                "{\"settings\": {\"retention-bytes\": \"1GiB\", \"compression\": \"lz4\"}}"), 200);

        assertThat(changed.get("settings").get("retention-bytes").asText()).isEqualTo("1GiB");
        assertThat(changed.get("settings").get("compression").asText()).isEqualTo("lz4");
        append("patched", "after");
        assertThat(server.records("/v1/logs/patched/records").values()).containsExactly("before", "after");
    }

    @Test
    void anAppendRacingAChangeOfSettingsIsAcknowledgedAndKeptOrRefusedUnwritten() throws Exception {
        json(create("raced", null), 201);
        Map<Long, String> acked = new ConcurrentHashMap<>();
        List<String> unexpected = new CopyOnWriteArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> appenders = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            int appender = t;
            Thread thread = new Thread(() -> {
                for (int i = 0; !stop.get(); i++) {
                    String payload = "appender " + appender + " record " + i;
                    try {
                        HttpResponse<String> r = server.post("/v1/logs/raced/records?durability=local",
                                payload.getBytes(StandardCharsets.UTF_8));
                        JsonNode body = JSON.readTree(r.body());
                        if (r.statusCode() == 200) {
                            acked.put(io.walden.core.Lsn.parse(body.get("lsn").asText()), payload);
                        } else if (r.statusCode() != 503 || !body.get("error").asText().equals("log_closed")) {
                            unexpected.add(r.statusCode() + " " + r.body());
                        }
                    } catch (Exception e) {
                        unexpected.add(e.toString());
                    }
                }
            });
            appenders.add(thread);
            thread.start();
        }
        for (int i = 0; i < 10; i++) {
            json(server.send("PATCH", "/v1/logs/raced", "{\"settings\": {\"durability\": \"" + (i % 2 == 0 ? "local" : "on")
                    + "\"}}"), 200);
        }
        stop.set(true);
        for (Thread t : appenders) {
            t.join();
        }

        assertThat(unexpected).isEmpty();
        Map<Long, String> found = server.records("/v1/logs/raced/records");
        assertThat(found).as("every acknowledged record, and no refused one").isEqualTo(acked);
    }

    @Test
    @Timeout(30) // a stream that never ended would hold the read below forever
    void aStreamOfALogThatIsDeletedEndsWithLogClosedAsItsLastLine() throws Exception {
        json(create("streamed", null), 201);
        String first = append("streamed", "first");
        HttpResponse<Stream<String>> stream = server.http.send(HttpRequest.newBuilder(
                server.uri("/v1/logs/streamed/records/stream?from=0/0")).build(), HttpResponse.BodyHandlers.ofLines());
        assertThat(stream.statusCode()).isEqualTo(200);
        Iterator<String> lines = stream.body().iterator();
        assertThat(JSON.readTree(lines.next()).get("lsn").asText()).isEqualTo(first);

        assertThat(server.send("DELETE", "/v1/logs/streamed", null).statusCode()).isEqualTo(204);
        String last = null;
        while (lines.hasNext()) {
            last = lines.next();
        }
        assertThat(last).as("the stream ends with an error line, not silently").isNotNull();
        assertThat(JSON.readTree(last).get("error").asText()).as(last).isEqualTo("log_closed");
    }

    @Test
    void theSegmentSizeCannotChangeOnceTheLogExists() throws Exception {
        json(create("fixed", "{\"segment-size\": \"1MiB\"}"), 201);

        JsonNode refused = json(server.send("PATCH", "/v1/logs/fixed", "{\"settings\": {\"segment-size\": \"2MiB\"}}"), 400);

        assertThat(refused.get("detail").asText()).contains("segment-size").contains("fixed when the log is created");
        assertThat(json(server.get("/v1/logs/fixed"), 200).get("settings").get("segment-size").asText()).isEqualTo("1MiB");
    }

    @Test
    void aLogACursorStillNeedsIsKeptUnlessTheDeletionIsForced() throws Exception {
        json(create("held", null), 201);
        String lsn = append("held", "unread");
        assertThat(server.put("/v1/logs/held/cursors/billing", "{\"lsn\": \"" + lsn + "\"}").statusCode()).isEqualTo(200);

        JsonNode refused = json(server.send("DELETE", "/v1/logs/held", null), 409);

        assertThat(refused.get("error").asText()).isEqualTo("log_held");
        assertThat(refused.get("detail").asText()).contains("billing");
        assertThat(server.records("/v1/logs/held/records").values()).containsExactly("unread");
        assertThat(server.get("/metrics").body()).contains("log=\"held\"");
        assertThat(server.send("DELETE", "/v1/logs/held?force=true", null).statusCode()).isEqualTo(204);
        assertThat(server.get("/v1/logs/held").statusCode()).isEqualTo(404);
        assertThat(server.get("/metrics").body()).as("a deleted log's meters go with it").doesNotContain("log=\"held\"");
    }

    @Test
    void theLogDefaultCannotBeDeletedNorChangedOverHttp() throws Exception {
        assertThat(json(server.send("DELETE", "/v1/logs/default", null), 409).get("error").asText())
                .isEqualTo("default_log");
        assertThat(json(server.send("PATCH", "/v1/logs/default", "{\"settings\": {\"durability\": \"off\"}}"), 409)
                .get("error").asText()).isEqualTo("log_settings_fixed");
    }

    @Test
    void eachLogsMetersCarryItsName() throws Exception {
        json(create("metered", null), 201);
        append("metered", "counted");

        String metrics = server.get("/metrics").body();

        assertThat(metrics).contains("walden_appends_total{durability=\"local\",log=\"metered\"} 1.0")
                .contains("walden_lsn{log=\"default\",position=\"flushed\"}");
    }
}
