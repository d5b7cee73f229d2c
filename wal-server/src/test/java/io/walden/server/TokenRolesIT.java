package io.walden.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.server.auth.Tokens;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tokens with roles and log patterns (docs/operations.md, "Tokens and roles") against a running {@code walden.jar serve}
 * with {@code --auth-tokens} and {@code --auth-token}: each role may do what it is given and is refused the rest, 401
 * without a known token and 403 with one that may not, nothing changed by a refusal, and each refusal counted on
 * {@code /metrics}. The tokens file is written by {@code walden hash-token}, as an operator writes it.
 *
 * <p>One server for the class (its tests run one after another): each test checks the log's end around its own
 * refusals. Cost: a server start and three short {@code walden} runs, a few seconds.
 */
class TokenRolesIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ADMIN = "admin-token";
    private static final String READER = "reader-token";
    private static final String APPENDER = "appender-token";
    /** Appends, limited to {@code orders*} and {@code audit}. */
    private static final String ORDERS = "orders-token";
    /** An admin limited to {@code orders*}: no {@code /admin} endpoint is its. */
    private static final String ORDERS_ADMIN = "orders-admin-token";

    @TempDir
    static Path work;
    @AutoClose
    private static ServerProcess server;

    @BeforeAll
    static void startWithATokensFileWrittenByHashToken() throws Exception {
        StringBuilder file = new StringBuilder("tokens:\n");
        file.append(hashToken(READER));
        file.append(hashToken(ORDERS, "--role", "append", "--log", "orders*", "--log", "audit"));
        file.append("  - sha256: ").append(hex(APPENDER)).append("\n    role: append\n");
        file.append("  - sha256: ").append(hex(ORDERS_ADMIN)).append("\n    role: admin\n    logs: [\"orders*\"]\n");
        Path tokens = Files.writeString(work.resolve("tokens.yaml"), file);
        server = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort(), "--auth-tokens",
                tokens.toString(), "--auth-token", ADMIN, "--durability", "local", "--replication-listen", "none");
    }

    /** {@code walden hash-token ARGS < token}: its entry. */
    private static String hashToken(String token, String... args) throws Exception {
        Path in = Files.writeString(work.resolve(token + ".token"), token + "\n");
        String[] command = new String[args.length + 1];
        command[0] = "hash-token";
        System.arraycopy(args, 0, command, 1, args.length);
        WaldenJar.Run run = WaldenJar.run(work, Map.of(), in, command);
        assertThat(run.exitCode()).as(run.stderr()).isZero();
        return run.stdout();
    }

    private static String hex(String token) {
        return HexFormat.of().formatHex(Tokens.sha256(token));
    }

    private static HttpResponse<String> send(String token, String method, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(server.uri(path))
                .method(method, HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return server.http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String end() throws Exception {
        return JSON.readTree(server.get("/admin/status").body()).get("insert_lsn").asText();
    }

    private static void assertRefused(HttpResponse<String> answer, int status, String error) throws Exception {
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(status);
        assertThat(JSON.readTree(answer.body()).get("error").asText()).isEqualTo(error);
    }

    @Test
    void aRequestWithoutATokenOrWithAnUnknownOneIs401AndChangesNothing() throws Exception {
        String end = end();
        HttpResponse<String> none = send(null, "POST", "/v1/records", "no token");
        assertRefused(none, 401, "unauthorized");
        assertThat(none.headers().firstValue("WWW-Authenticate")).hasValue("Bearer realm=\"walden\"");
        HttpResponse<String> unknown = send("not-a-token", "POST", "/v1/records", "unknown token");
        assertRefused(unknown, 401, "unauthorized");
        assertThat(unknown.headers().firstValue("WWW-Authenticate").orElseThrow()).contains("error=\"invalid_token\"");
        assertThat(end()).as("nothing appended").isEqualTo(end);
    }

    @Test
    void aReadTokenReadsAndMovesItsCursorsButMayNotAppendOrAdminister() throws Exception {
        assertThat(send(APPENDER, "POST", "/v1/records", "for the reader").statusCode()).isEqualTo(200);
        assertThat(send(READER, "GET", "/v1/records", "").statusCode()).isEqualTo(200);
        assertThat(send(READER, "PUT", "/v1/cursors/reader", "{\"lsn\":\"" + end() + "\"}").statusCode()).isEqualTo(200);
        assertThat(send(READER, "GET", "/v1/cursors/reader", "").statusCode()).isEqualTo(200);
        String end = end();
        HttpResponse<String> append = send(READER, "POST", "/v1/records", "refused");
        assertRefused(append, 403, "forbidden");
        assertThat(append.body()).contains("role read").contains("append");
        assertThat(append.headers().firstValue("WWW-Authenticate").orElseThrow()).contains("insufficient_scope");
        assertRefused(send(READER, "POST", "/v1/records/batch", "refused"), 403, "forbidden");
        assertRefused(send(READER, "POST", "/admin/checkpoint?lsn=" + end, ""), 403, "forbidden");
        assertThat(end()).as("nothing appended").isEqualTo(end);
    }

    @Test
    void anAppendTokenAppendsButMayNotAdminister() throws Exception {
        String end = end();
        assertThat(send(APPENDER, "POST", "/v1/records", "appended").statusCode()).isEqualTo(200);
        assertThat(end()).isNotEqualTo(end);
        String oldest = JSON.readTree(server.get("/admin/status").body()).get("oldest_lsn").asText();
        assertRefused(send(APPENDER, "POST", "/admin/checkpoint?lsn=" + end(), ""), 403, "forbidden");
        assertThat(JSON.readTree(server.get("/admin/status").body()).get("oldest_lsn").asText()).isEqualTo(oldest);
    }

    @Test
    void theAuthTokenAndAnAdminEntryAdministerButAnAdminLimitedToLogsDoesNot() throws Exception {
        assertThat(send(ADMIN, "POST", "/admin/checkpoint?lsn=0/0", "").statusCode()).isEqualTo(200);
        HttpResponse<String> limited = send(ORDERS_ADMIN, "POST", "/admin/checkpoint?lsn=0/0", "");
        assertRefused(limited, 403, "forbidden");
        assertThat(limited.body()).contains("limited to some logs").contains("whole server");
    }

    @Test
    void aTokenLimitedToLogPatternsUsesOnlyTheLogsTheyMatch() throws Exception {
        assertThat(send(ADMIN, "POST", "/v1/logs", "{\"name\": \"orders-eu\"}").statusCode()).isEqualTo(201);
        assertThat(send(ADMIN, "POST", "/v1/logs", "{\"name\": \"invoices\"}").statusCode()).isEqualTo(201);
        assertThat(send(ORDERS, "POST", "/v1/logs/orders-eu/records", "its log").statusCode()).isEqualTo(200);
        String end = end();
        String invoicesEnd = logEnd("invoices");
        HttpResponse<String> append = send(ORDERS, "POST", "/v1/records", "not its log");
        assertRefused(append, 403, "forbidden");
        assertThat(append.body()).contains("'default'").contains("orders*, audit");
        assertRefused(send(ORDERS, "GET", "/v1/records", ""), 403, "forbidden");
        assertRefused(send(ORDERS, "POST", "/v1/logs/invoices/records", "not its log"), 403, "forbidden");
        assertRefused(send(ORDERS, "GET", "/v1/logs/invoices", ""), 403, "forbidden");
        assertThat(end()).as("nothing appended to default").isEqualTo(end);
        assertThat(logEnd("invoices")).as("nothing appended to invoices").isEqualTo(invoicesEnd);
        // Past the gate: what the log's own endpoint answers (the token is not what refuses it).
        assertThat(send(ORDERS, "GET", "/v1/logs/audit/cursors", "").statusCode()).isNotIn(401, 403);
    }

    @Test
    void aTokenLimitedToLogPatternsListsAndCreatesOnlyTheLogsTheyMatch() throws Exception {
        assertThat(send(ADMIN, "POST", "/v1/logs", "{\"name\": \"ledger\"}").statusCode()).isEqualTo(201);
        assertThat(send(ORDERS_ADMIN, "POST", "/v1/logs", "{\"name\": \"orders-us\"}").statusCode()).isEqualTo(201);
        HttpResponse<String> refused = send(ORDERS_ADMIN, "POST", "/v1/logs", "{\"name\": \"ledger-2\"}");
        assertRefused(refused, 403, "forbidden");
        assertThat(refused.body()).contains("'ledger-2'").contains("orders*");
        assertThat(logNames(ADMIN)).contains("default", "ledger", "orders-us").doesNotContain("ledger-2");
        assertThat(logNames(ORDERS)).contains("orders-us").allMatch(n -> n.startsWith("orders") || n.equals("audit"));
    }

    private static List<String> logNames(String token) throws Exception {
        HttpResponse<String> list = send(token, "GET", "/v1/logs", "");
        assertThat(list.statusCode()).as(list.body()).isEqualTo(200);
        List<String> names = new ArrayList<>();
        JSON.readTree(list.body()).get("logs").forEach(l -> names.add(l.get("name").asText()));
        return names;
    }

    /** The end of the named log {@code log}, as an admin reads its description. */
    private static String logEnd(String log) throws Exception {
        HttpResponse<String> described = send(ADMIN, "GET", "/v1/logs/" + log, "");
        assertThat(described.statusCode()).as(described.body()).isEqualTo(200);
        return JSON.readTree(described.body()).findValue("insert_lsn").asText();
    }

    @Test
    void everyRefusalIsCountedByWhy() throws Exception {
        Map<String, Double> before = refusals();
        send(null, "GET", "/v1/records", "");
        send("not-a-token", "GET", "/v1/records", "");
        send(READER, "POST", "/v1/records", "refused");
        send(ORDERS, "GET", "/v1/records", "");
        Map<String, Double> after = refusals();
        for (String reason : new String[] {"missing", "unknown", "role", "log"}) {
            assertThat(after.get(reason)).as(reason).isEqualTo(before.get(reason) + 1);
        }
    }

    /** {@code walden_http_auth_refusals_total} by reason, from {@code /metrics}. */
    private static Map<String, Double> refusals() throws Exception {
        Map<String, Double> counts = new HashMap<>();
        Matcher m = Pattern.compile("(?m)^walden_http_auth_refusals_total\\{reason=\"(\\w+)\"} (\\S+)$")
                .matcher(server.get("/metrics").body());
        while (m.find()) {
            counts.put(m.group(1), Double.parseDouble(m.group(2)));
        }
        assertThat(counts).containsOnlyKeys("missing", "unknown", "role", "log");
        return counts;
    }

    @Test
    void aChangedTokensFileIsInForceWithinSecondsAndABadOneLeavesTheTokensInForce() throws Exception {
        Path file = work.resolve("tokens.yaml");
        String original = Files.readString(file);
        String rotated = "rotated-token";
        assertRefused(send(rotated, "GET", "/v1/logs", ""), 401, "unauthorized");
        try {
            Files.writeString(file, original + "  - sha256: " + hex(rotated) + "\n    role: read\n");
            waitUntil(() -> send(rotated, "GET", "/v1/logs", "").statusCode() == 200); // re-read within 3 s

            double refused = reloads("refused");
            Files.writeString(file, "tokens:\n  - sha256: not-hex\n    role: read\n");
            waitUntil(() -> reloads("refused") >= refused + 1);
            assertThat(server.get("/metrics").body()).contains("walden_http_auth_tokens_file_valid 0.0");
            assertThat(send(rotated, "GET", "/v1/logs", "").statusCode()).as("the tokens in force stay").isEqualTo(200);
            assertThat(send(ADMIN, "GET", "/admin/status", "").statusCode()).as("--auth-token stays").isEqualTo(200);
        } finally {
            Files.writeString(file, original); // revoked: the other tests' file again
        }
        waitUntil(() -> send(rotated, "GET", "/v1/logs", "").statusCode() == 401);
        assertThat(send(READER, "GET", "/v1/logs", "").statusCode()).isEqualTo(200);
        assertThat(server.get("/metrics").body()).contains("walden_http_auth_tokens_file_valid 1.0");
    }

    /** {@code walden_http_auth_reloads_total{result}} from {@code /metrics}. */
    private static double reloads(String result) throws Exception {
        Matcher m = Pattern.compile("(?m)^walden_http_auth_reloads_total\\{result=\"" + result + "\"} (\\S+)$")
                .matcher(server.get("/metrics").body());
        assertThat(m.find()).as("walden_http_auth_reloads_total{result=%s} on /metrics", result).isTrue();
        return Double.parseDouble(m.group(1));
    }

    @Test
    void aBadTokensFileStopsTheServerInOneLineNamingTheFileAndTheEntry() throws Exception {
        Path bad = Files.writeString(work.resolve("bad.yaml"), "tokens:\n  - sha256: " + hex("x") + "\n    role: read\n"
                + "  - sha256: " + hex("y") + "\n    role: writer\n");
        WaldenJar.Run run = WaldenJar.run(work, "serve", "--data-dir", work.resolve("unused").toString(), "--http",
                "127.0.0.1:" + ServerProcess.freePort(), "--replication-listen", "none", "--auth-tokens", bad.toString());
        assertThat(WaldenJar.assertOneLineUserError(run, "--auth-tokens: " + bad + ": entry 2: "))
                .endsWith("unknown role 'writer' (read, append or admin)");
    }

    @Test
    void hashTokenRefusesAnEmptyToken() throws Exception {
        Path empty = Files.writeString(work.resolve("empty.token"), "\n");
        WaldenJar.assertOneLineUserError(WaldenJar.run(work, Map.of(), empty, "hash-token"), "holds no token");
    }
}
