package io.walden.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Lsn;
import io.walden.server.WaldenServer;
import io.walden.server.config.ServerConfig;
import io.walden.server.contract.ContractCheckedClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The cursor endpoints (docs/http-api.md, "Cursors") over real HTTP to an in-process server that requires a token. */
@Timeout(60)
class HttpCursorTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TOKEN = "cursor-token";

    @TempDir
    Path dir;
    private WaldenServer server;
    private final HttpClient http = ContractCheckedClient.create();
    private final List<String> lsns = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        server = new WaldenServer(ServerConfig.load(null, Map.of("data-dir", dir.resolve("log").toString(),
                "http", "127.0.0.1:0", "replication-listen", "127.0.0.1:0", "durability", "local", "auth-token", TOKEN, "replication-secret", "cursor-secret"))).start();
        for (int i = 0; i < 5; i++) {
            lsns.add(JSON.readTree(send("POST", "/v1/records", "event " + i).body()).get("lsn").asText());
        }
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private HttpResponse<String> send(String method, String path, String body) throws Exception {
        return send(method, path, body, true);
    }

    private HttpResponse<String> send(String method, String path, String body, boolean withToken) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.boundAddress().getPort() + path))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (withToken) {
            b.header("Authorization", "Bearer " + TOKEN);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String error(HttpResponse<String> r) throws Exception {
        return JSON.readTree(r.body()).get("error").asText();
    }

    @Test
    void shouldCreateMoveForwardReadAndDeleteACursor() throws Exception {
        HttpResponse<String> created = send("PUT", "/v1/cursors/orders", "{\"lsn\":\"" + lsns.get(1) + "\"}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(200);
        assertThat(JSON.readTree(created.body()).get("lsn").asText()).isEqualTo(lsns.get(1));
        assertThat(send("PUT", "/v1/cursors/orders", "{\"lsn\":\"" + lsns.get(3) + "\"}").statusCode()).isEqualTo(200);
        JsonNode got = JSON.readTree(send("GET", "/v1/cursors/orders", null).body());
        assertThat(got.get("name").asText()).isEqualTo("orders");
        assertThat(got.get("lsn").asText()).isEqualTo(lsns.get(3));

        JsonNode page = JSON.readTree(send("GET", "/v1/records?cursor=orders", null).body());
        assertThat(page.get("records")).hasSize(2);
        assertThat(new String(Base64.getDecoder().decode(page.get("records").get(0).get("data").asText()), StandardCharsets.UTF_8))
                .isEqualTo("event 3");

        JsonNode list = JSON.readTree(send("GET", "/v1/cursors", null).body()).get("cursors");
        assertThat(list).hasSize(1);
        assertThat(list.get(0).get("lag_bytes").asLong()).isEqualTo(server.wal().insertLsn() - Lsn.parse(lsns.get(3)));
        assertThat(list.get(0).get("lost").asBoolean()).isFalse();
        JsonNode status = JSON.readTree(send("GET", "/admin/status", null).body());
        assertThat(status.get("cursors").get(0).get("name").asText()).isEqualTo("orders");

        assertThat(send("DELETE", "/v1/cursors/orders", null).statusCode()).isEqualTo(204);
        HttpResponse<String> gone = send("GET", "/v1/cursors/orders", null);
        assertThat(gone.statusCode()).isEqualTo(404);
        assertThat(error(gone)).isEqualTo("unknown_cursor");
    }

    @Test
    void shouldRefuseToMoveACursorBackwardsAndKeepIt() throws Exception {
        send("PUT", "/v1/cursors/c", "{\"lsn\":\"" + lsns.get(3) + "\"}");
        HttpResponse<String> back = send("PUT", "/v1/cursors/c", "{\"lsn\":\"" + lsns.get(1) + "\"}");
        assertThat(back.statusCode()).isEqualTo(409);
        assertThat(error(back)).isEqualTo("cursor_backwards");
        assertThat(JSON.readTree(back.body()).get("lsn").asText()).isEqualTo(lsns.get(3));
        assertThat(JSON.readTree(send("GET", "/v1/cursors/c", null).body()).get("lsn").asText()).isEqualTo(lsns.get(3));
    }

    @Test
    void shouldAnswerBadInputWithAClearErrorAndChangeNothing() throws Exception {
        long end = server.wal().insertLsn();
        assertThat(error(send("PUT", "/v1/cursors/bad%20name", "{\"lsn\":\"0/40\"}"))).isEqualTo("bad_parameter");
        assertThat(error(send("PUT", "/v1/cursors/" + "x".repeat(65), "{\"lsn\":\"0/40\"}"))).isEqualTo("bad_parameter");
        assertThat(error(send("PUT", "/v1/cursors/c", "{\"lsn\":\"nonsense\"}"))).isEqualTo("bad_parameter");
        assertThat(error(send("PUT", "/v1/cursors/c", "not json"))).isEqualTo("bad_parameter");
        assertThat(error(send("PUT", "/v1/cursors/c", "{\"lsn\":\"" + Lsn.format(end + 800) + "\"}"))).isEqualTo("bad_parameter");
        assertThat(error(send("PUT", "/v1/cursors/c", "{\"lsn\":\"" + Lsn.format(Lsn.parse(lsns.get(2)) + 8) + "\"}")))
                .isEqualTo("bad_parameter");
        HttpResponse<String> unknown = send("GET", "/v1/records?cursor=nobody", null);
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(send("GET", "/v1/records?cursor=c&from=0/40", null).statusCode()).isEqualTo(400);
        assertThat(send("POST", "/v1/cursors/c", "{}").statusCode()).isEqualTo(405);
        assertThat(JSON.readTree(send("GET", "/v1/cursors", null).body()).get("cursors")).isEmpty();
        assertThat(server.wal().insertLsn()).as("nothing appended").isEqualTo(end);
    }

    @Test
    void aNameNoCursorCanHaveIsRefusedWith400OnEveryCursorRouteBeforeAnythingElse() throws Exception {
        long end = server.wal().insertLsn();
        for (HttpResponse<String> r : List.of(send("GET", "/v1/cursors/bad%2Fname", null),
                send("PUT", "/v1/cursors/bad%2Fname", "not even json"), send("DELETE", "/v1/cursors/bad%2Fname", null),
                send("GET", "/v1/records?cursor=bad%2Fname", null), send("GET", "/v1/records/stream?cursor=bad%2Fname", null))) {
            assertThat(r.statusCode()).as(r.request().uri() + ": " + r.body()).isEqualTo(400);
            assertThat(JSON.readTree(r.body()).get("detail").asText()).contains("a cursor's name is").contains("'bad/name'");
        }
        assertThat(server.wal().insertLsn()).as("nothing appended").isEqualTo(end);
    }

    @Test
    void aPercentEncodedNameIsTheNameItEncodes() throws Exception {
        assertThat(send("PUT", "/v1/cursors/my%2Dcursor", "{\"lsn\":\"" + lsns.get(2) + "\"}").statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(send("GET", "/v1/cursors/my-cursor", null).body()).get("lsn").asText()).isEqualTo(lsns.get(2));
        assertThat(send("DELETE", "/v1/cursors/my%2dcursor", null).statusCode()).isEqualTo(204);
        assertThat(send("GET", "/v1/cursors/my-cursor", null).statusCode()).isEqualTo(404);
    }

    @Test
    void shouldRequireTheTokenLikeTheDataApi() throws Exception {
        assertThat(send("PUT", "/v1/cursors/c", "{\"lsn\":\"" + lsns.get(0) + "\"}", false).statusCode()).isEqualTo(401);
        assertThat(send("GET", "/v1/cursors", null, false).statusCode()).isEqualTo(401);
    }
}
