package io.walden.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.server.WaldenServer;
import io.walden.server.config.ServerConfig;
import io.walden.server.contract.ContractCheckedClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The OpenAPI document ({@code GET /v1/openapi.json}) is the route table's, both ways, and docs/http-api.md lists the
 * same endpoints: a route cannot be added, removed or renamed without the document and the guide following.
 */
class ApiDocumentTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> METHODS = Set.of("get", "put", "post", "delete", "patch", "head", "options");

    @TempDir
    Path dir;
    private WaldenServer server;

    @BeforeEach
    void start() throws Exception {
        server = new WaldenServer(ServerConfig.load(null, Map.of("data-dir", dir.resolve("log").toString(),
                "http", "127.0.0.1:0", "replication-listen", "none", "durability", "local"))).start();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private static Set<String> documented(JsonNode doc) {
        Set<String> out = new TreeSet<>();
        for (Iterator<Map.Entry<String, JsonNode>> paths = doc.get("paths").fields(); paths.hasNext(); ) {
            Map.Entry<String, JsonNode> p = paths.next();
            for (Iterator<String> ops = p.getValue().fieldNames(); ops.hasNext(); ) {
                String op = ops.next();
                if (METHODS.contains(op)) {
                    out.add(op.toUpperCase(Locale.ROOT) + " " + p.getKey());
                }
            }
        }
        return out;
    }

    @Test
    void everyRouteIsInTheDocumentAndEveryOperationInItIsRouted() throws Exception {
        Set<String> routed = new TreeSet<>();
        for (Route r : server.routes().all()) {
            routed.add(r.method().name() + " " + r.path());
        }
        assertThat(documented(JSON.readTree(ApiDocument.text()))).isEqualTo(routed);
    }

    @Test
    void theServerServesTheDocumentWithoutAToken() throws Exception {
        HttpResponse<String> answer = ContractCheckedClient.create().send(HttpRequest.newBuilder(URI.create(
                "http://127.0.0.1:" + server.boundAddress().getPort() + "/v1/openapi.json")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(answer.headers().firstValue("content-type")).hasValue("application/json");
        JsonNode doc = JSON.readTree(answer.body());
        assertThat(doc.get("openapi").asText()).isEqualTo("3.1.0");
        assertThat(doc.at("/components/schemas/Status/properties/version").isMissingNode()).isFalse();
    }

    @Test
    void everySchemaReferenceResolves() throws Exception {
        JsonNode doc = JSON.readTree(ApiDocument.text());
        Matcher refs = Pattern.compile("\"\\$ref\"\\s*:\\s*\"#/components/schemas/([A-Za-z]+)\"").matcher(ApiDocument.text());
        int n = 0;
        while (refs.find()) {
            assertThat(doc.at("/components/schemas/" + refs.group(1)).isMissingNode()).as(refs.group(1)).isFalse();
            n++;
        }
        assertThat(n).isGreaterThan(20);
    }

    /** The guide's endpoint headings and admin table rows ({@code ### `GET /v1/...`}, {@code | `POST /admin/...`}). */
    @Test
    void theGuideListsTheSameEndpointsAsTheDocument() throws Exception {
        Set<String> inGuide = new TreeSet<>();
        Pattern endpoint = Pattern.compile("`(GET|PUT|POST|PATCH|DELETE) (/[A-Za-z0-9/{}._-]*)");
        for (String line : Files.readAllLines(Path.of("..", "docs", "http-api.md"))) {
            if (line.startsWith("### `") || line.startsWith("| `")) {
                Matcher m = endpoint.matcher(line);
                while (m.find()) {
                    inGuide.add(m.group(1) + " " + m.group(2));
                }
            }
        }
        assertThat(inGuide).isEqualTo(documented(JSON.readTree(ApiDocument.text())));
    }
}
