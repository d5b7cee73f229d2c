package io.walden.server.http;

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
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The token gate is driven by the route table (docs/http-api.md, "Authentication"): every route the router has needs the
 * token unless it was declared read-only, so that a new endpoint cannot be left open by forgetting a list. Over real
 * HTTP, to an in-process server that requires a token.
 */
@Timeout(60)
class RouteAccessTest {
    private static final String TOKEN = "gate-token";
    /** The endpoints anyone who reaches the port may call: adding one here must be a decision, not an accident. */
    private static final Set<String> READ_ONLY = Set.of("GET /", "GET /health", "GET /ready",
            "GET /metrics", "GET /admin/status", "GET /admin/segments", "GET /v1/openapi.json");

    @TempDir
    Path dir;
    private WaldenServer server;
    private final HttpClient http = ContractCheckedClient.create();

    @BeforeEach
    void start() throws Exception {
        server = new WaldenServer(ServerConfig.load(null, Map.of("data-dir", dir.resolve("log").toString(),
                "http", "127.0.0.1:0", "replication-listen", "127.0.0.1:0", "durability", "local", "auth-token", TOKEN,
                "replication-secret", "gate-secret"))).start();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private HttpResponse<String> send(String method, String target) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.boundAddress().getPort() + target))
                .method(method, HttpRequest.BodyPublishers.ofString("{\"lsn\":\"0/40\"}")).build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** A request a route answers: its named segment filled in, with the parameters its handler asks for. */
    private static String target(Route r) {
        return r.path().replace("{name}", "probe").replace("{log}", "default") + "?to=b&name=probe&lsn=0/40&durability=off";
    }

    @Test
    void everyRouteNeedsTheTokenUnlessItIsDeclaredReadOnly() throws Exception {
        long end = server.wal().insertLsn();
        for (Route r : server.routes().all()) {
            String id = r.method().name() + " " + r.path();
            assertThat(r.needsToken()).as(id).isEqualTo(!READ_ONLY.contains(id));
            HttpResponse<String> answer = send(r.method().name(), target(r));
            if (r.needsToken()) {
                assertThat(answer.statusCode()).as(id + " without the token: " + answer.body()).isEqualTo(401);
            } else {
                assertThat(answer.statusCode()).as(id + " is open").isNotEqualTo(401);
            }
        }
        assertThat(server.wal().insertLsn()).as("nothing written without the token").isEqualTo(end);
    }

    @Test
    void aSwitchoverWithoutTheTokenIsRefused() throws Exception {
        HttpResponse<String> answer = send("POST", "/admin/switchover?to=b");
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(401);
    }

    @Test
    void aRequestNoRouteMatchesNeedsTheTokenUnlessItsPathIsReadOnly() throws Exception {
        assertThat(send("POST", "/admin/not-an-endpoint").statusCode()).isEqualTo(401);
        assertThat(send("GET", "/v1/cursors/a/b").statusCode()).isEqualTo(401);
        assertThat(send("POST", "/health").statusCode()).as("a read-only path: the method is wrong").isEqualTo(405);
    }
}
