package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.uring.IoUring;
import io.walden.core.ForgedRecords;
import io.walden.core.Lsn;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The sidecar through the real jar in child processes, over real HTTP on loopback.
 *
 * <p>Tests that neither stop, damage nor reconfigure a server share one of two started once for the class; the rest
 * start their own. A test on a shared server reads what it appended from its LSNs and counts from what the server
 * said before it, so it passes alone and in any order; the tests of a class run one after another
 * ({@code junit.jupiter.execution.parallel.mode.default = same_thread}).
 */
class ServerIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] LEVELS = {"off", "local", "remote_write", "on", "remote_apply"};

    @TempDir
    static Path shared;
    /** Started with the defaults, on a replication port the tests know. */
    @AutoClose
    private static ServerProcess plain;
    private static int plainReplicationPort;
    /** Small limits, each met by one test: one reader slot, a stream write timeout of 1 s, batches of up to 1 MiB. */
    @AutoClose
    private static ServerProcess limited;

    @TempDir
    Path work;

    @BeforeAll
    static void startSharedServers() throws Exception {
        plainReplicationPort = ServerProcess.freePort();
        plain = ServerProcess.start(shared, shared.resolve("data"), ServerProcess.freePort(),
                "--replication-listen", "127.0.0.1:" + plainReplicationPort);
        limited = ServerProcess.start(shared, shared.resolve("limited"), ServerProcess.freePort(), "--max-readers", "1",
                "--stream-write-timeout-ms", "1000", "--max-batch-bytes", "1048576");
    }

    private Path data() {
        return work.resolve("data");
    }

    @Test
    void shouldKeepEveryAcknowledgedAppendAcrossKill9() throws Exception {
        Map<String, String> acked = new ConcurrentHashMap<>(); // lsn -> payload
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        int port = ServerProcess.freePort();
        try (ServerProcess server = ServerProcess.start(work, data(), port)) {
            List<Thread> clients = new ArrayList<>();
            for (int c = 0; c < 8; c++) {
                int client = c;
                Thread t = new Thread(() -> {
                    try {
                        for (int i = 0; i < 40; i++) {
                            String level = LEVELS[(client + i) % LEVELS.length];
                            String payload = "client " + client + " record " + i + " at " + level;
                            HttpResponse<String> r = server.post("/v1/records?durability=" + level + "&type=" + client,
                                    payload.getBytes(StandardCharsets.UTF_8));
                            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                            JsonNode body = JSON.readTree(r.body());
                            assertThat(body.get("durability").asText()).isEqualTo(level);
                            acked.put(body.get("lsn").asText(), payload);
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                });
                clients.add(t);
                t.start();
            }
            for (Thread t : clients) {
                t.join();
            }
            // OFF returns with the record in the WAL buffers (process memory): it survives a kill -9 once the
            // background writer wrote it into the file, which it does by itself within offWriteDelay
            // (docs/durability.md). Wait for that, without asking for it; every other level survives at once.
            String insert = JSON.readTree(server.get("/admin/status").body()).get("insert_lsn").asText();
            waitUntil(() -> Lsn.parse(JSON.readTree(server.get("/admin/status").body()).get("written_lsn").asText())
                    >= Lsn.parse(insert));
            server.kill();
        }
        assertThat(errors).isEmpty();
        assertThat(acked).hasSize(320);
        try (ServerProcess server = ServerProcess.start(work, data(), port)) {
            Map<Long, String> found = server.records();
            for (Map.Entry<String, String> e : acked.entrySet()) {
                assertThat(found.get(Lsn.parse(e.getKey()))).as("record %s", e.getKey()).isEqualTo(e.getValue());
            }
        }
    }

    @Test
    void shouldAppendAcrossManySegmentRollsFromManyConnectionsLosingNothing() throws Exception {
        Map<String, String> acked = new ConcurrentHashMap<>();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        try (ServerProcess server = ServerProcess.start(work, data(), ServerProcess.freePort(), "--segment-size", "65536")) {
            List<Thread> clients = new ArrayList<>();
            for (int c = 0; c < 6; c++) {
                int client = c;
                Thread t = new Thread(() -> {
                    try {
                        for (int i = 0; i < 60; i++) {
                            String payload = "client " + client + " record " + i + " " + "x".repeat(3000);
                            if (i % 3 == 0) {
                                byte[] one = payload.getBytes(StandardCharsets.UTF_8);
                                ByteBuffer b = ByteBuffer.allocate(2 * (4 + one.length));
                                b.putInt(one.length).put(one).putInt(one.length).put(one);
                                HttpResponse<String> r = server.post("/v1/records/batch?durability=local", b.array());
                                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                                for (JsonNode lsn : JSON.readTree(r.body()).get("lsns")) {
                                    acked.put(lsn.asText(), payload);
                                }
                            } else {
                                HttpResponse<String> r = server.post("/v1/records?durability=" + (i % 2 == 0 ? "off" : "local"),
                                        payload.getBytes(StandardCharsets.UTF_8));
                                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                                acked.put(JSON.readTree(r.body()).get("lsn").asText(), payload);
                            }
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                });
                clients.add(t);
                t.start();
            }
            for (Thread t : clients) {
                t.join();
            }
            assertThat(errors).isEmpty();
            assertThat(JSON.readTree(server.get("/admin/status").body()).get("segments").asInt()).as("it rolled many times")
                    .isGreaterThan(10);
            Map<Long, String> found = server.records();
            assertThat(found).hasSize(acked.size());
            for (Map.Entry<String, String> e : acked.entrySet()) {
                assertThat(found.get(Lsn.parse(e.getKey()))).isEqualTo(e.getValue());
            }
        }
    }

    @Test
    void shouldLoseNothingAndRecoverCleanlyAfterSigterm() throws Exception {
        int port = ServerProcess.freePort();
        List<String> lsns = new ArrayList<>();
        try (ServerProcess server = ServerProcess.start(work, data(), port)) {
            for (int i = 0; i < 20; i++) {
                lsns.add(JSON.readTree(server.post("/v1/records?durability=off", ("r" + i).getBytes()).body()).get("lsn").asText());
            }
            assertThat(server.terminate()).isIn(0, 143);
            assertThat(server.output()).contains("Walden server stopped");
        }
        try (ServerProcess server = ServerProcess.start(work, data(), port)) {
            JsonNode status = JSON.readTree(server.get("/admin/status").body());
            assertThat(status.at("/recovery/reason").asText()).isEqualTo("clean end");
            assertThat(status.at("/recovery/bytes_cut_off").asLong()).isZero();
            assertThat(server.records()).hasSize(20).containsKey(Lsn.parse(lsns.get(19)));
        }
    }

    @Test
    void shouldServeOnEveryTransportItIsAskedFor() throws Exception {
        for (String transport : new String[] {"nio", "epoll", "io_uring"}) {
            if (transport.equals("epoll") && !Epoll.isAvailable()
                    || transport.equals("io_uring") && !IoUring.isAvailable()) {
                continue; // not on this kernel (a server asked for it refuses to start, saying why)
            }
            try (ServerProcess server = ServerProcess.start(work, work.resolve("data-" + transport), ServerProcess.freePort(),
                    "--transport", transport)) {
                HttpResponse<String> appended = server.post("/v1/records?durability=local", new byte[10]);
                assertThat(appended.statusCode()).as(appended.body()).isEqualTo(200);
                assertThat(JSON.readTree(server.get("/admin/status").body()).get("transport").asText()).isEqualTo(transport);
            }
        }
    }

    @Test
    void shouldServeTheAdminEndpointsAndPrometheusMetrics() throws Exception {
        ServerProcess server = plain;
        String before = server.get("/metrics").body(); // the shared server's counters hold other tests' appends
        for (int i = 0; i < 5; i++) {
            server.post("/v1/records?durability=on", new byte[100]);
        }
        assertThat(server.get("/health").body()).contains("alive");
        assertThat(server.get("/ready").statusCode()).isEqualTo(200);
        JsonNode status = JSON.readTree(server.get("/admin/status").body());
        for (String field : new String[] {"role", "insert_lsn", "written_lsn", "flushed_lsn", "oldest_lsn", "segments",
                "bytes", "durability", "sync_method", "epoch", "recovery", "replicas"}) {
            assertThat(status.has(field)).as(field).isTrue();
        }
        assertThat(status.get("role").asText()).isEqualTo("primary");
        assertThat(status.get("durability").asText()).isEqualTo("on");
        assertThat(status.get("transport").asText()).as("epoll wherever it loads")
                .isEqualTo(Epoll.isAvailable() ? "epoll" : "nio");
        assertThat(Lsn.parse(status.get("flushed_lsn").asText())).isEqualTo(Lsn.parse(status.get("insert_lsn").asText()));
        JsonNode segments = JSON.readTree(server.get("/admin/segments").body()).get("segments");
        assertThat(segments.get(0).get("name").asText()).isEqualTo("0000000000000000.wal");
        String metrics = server.get("/metrics").body();
        for (String series : new String[] {"walden_appends_total{durability=\"on\",log=\"default\"}",
                "walden_commit_latency_seconds_count{durability=\"on\"}",
                "walden_commit_latency_seconds_bucket{durability=\"on\",le=\"10.0\"}"}) {
            assertThat(sample(metrics, series)).as(series).isEqualTo(sample(before, series) + 5);
        }
        assertThat(metrics).contains("walden_flushes_total").contains("walden_flush_duration_seconds_count")
                .contains("walden_commits_per_flush_count").contains("walden_lsn{log=\"default\",position=\"flushed\"}")
                .contains("jvm_memory_used_bytes").contains("netty_allocator_memory_used")
                .contains("walden_flush_latency_seconds_bucket{log=\"default\",le=")
                .contains("walden_flush_commits_bucket{log=\"default\",le=");
        for (String line : metrics.split("\n")) {
            assertThat(line).as("Prometheus text format").matches("^(#.*|[a-zA-Z_:][a-zA-Z0-9_:]*(\\{.*\\})? \\S+)$");
        }
        HttpResponse<String> cp = server.post("/admin/checkpoint?lsn=" + status.get("flushed_lsn").asText(), new byte[0]);
        assertThat(cp.statusCode()).isEqualTo(200);
        assertThat(cp.body()).contains("oldest_lsn");
    }

    @Test
    void shouldReadAppendBatchesLongPollAndStream() throws Exception {
        ServerProcess server = plain;
        ByteBuffer batch = ByteBuffer.allocate(64);
        for (String s : new String[] {"one", "two", "three"}) {
            batch.putInt(s.length()).put(s.getBytes(StandardCharsets.UTF_8));
        }
        HttpResponse<String> b = server.post("/v1/records/batch?durability=local&type=7",
                Arrays.copyOf(batch.array(), batch.position()));
        assertThat(b.statusCode()).as(b.body()).isEqualTo(200);
        JsonNode lsns = JSON.readTree(b.body()).get("lsns");
        assertThat(lsns).hasSize(3);

        String first = lsns.get(0).asText();
        JsonNode page = JSON.readTree(server.get("/v1/records?from=" + first + "&limit=2").body());
        assertThat(page.get("records")).hasSize(2);
        assertThat(page.get("records").get(0).get("type").asInt()).isEqualTo(7);
        assertThat(new String(Base64.getDecoder().decode(page.get("records").get(1).get("data").asText()))).isEqualTo("two");
        assertThat(page.get("next").asText()).isEqualTo(lsns.get(2).asText());

        String next = JSON.readTree(server.get("/v1/records?from=" + lsns.get(2).asText()).body()).get("next").asText();
        long t0 = System.nanoTime();
        CompletableFuture<HttpResponse<String>> polling = server.http.sendAsync(HttpRequest.newBuilder(
                server.uri("/v1/records?from=" + next + "&wait_ms=10000")).build(), HttpResponse.BodyHandlers.ofString());
        assertThatThrownBy(() -> polling.get(300, TimeUnit.MILLISECONDS)).as("nothing to return yet: the read waits")
                .isInstanceOf(TimeoutException.class);
        server.post("/v1/records", "late".getBytes());
        JsonNode polled = JSON.readTree(polling.get(20, TimeUnit.SECONDS).body());
        assertThat(polled.get("records")).hasSize(1);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isLessThan(9000);

        HttpResponse<InputStream> stream = server.http.send(HttpRequest.newBuilder(server.uri("/v1/records/stream?from=" + first)).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(stream.headers().firstValue("content-type")).hasValue("application/x-ndjson");
        try (var lines = new BufferedReader(new InputStreamReader(stream.body(), StandardCharsets.UTF_8))) {
            for (String expected : new String[] {"one", "two", "three", "late"}) {
                JsonNode rec = JSON.readTree(lines.readLine());
                assertThat(new String(Base64.getDecoder().decode(rec.get("data").asText()))).isEqualTo(expected);
            }
        }
    }

    @Test
    void shouldAnswerGarbageOnTheReplicationPortAndKeepServing() throws Exception {
        ServerProcess server = plain;
        for (byte[] garbage : new byte[][] {"GET / HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII),
                {0x7f, 0x7f, 0x7f, 0x7f, 1}, {0, 0, 0, 1, '?'}}) {
            try (Socket s = new Socket("127.0.0.1", plainReplicationPort)) {
                s.getOutputStream().write(garbage);
                s.getOutputStream().flush();
                s.setSoTimeout(5000);
                byte[] answer = s.getInputStream().readAllBytes(); // an Error frame, then the connection closes
                assertThat(answer.length).as("an error frame before the close").isGreaterThan(5);
                assertThat(answer[4]).as("frame type").isEqualTo((byte) 'E');
            }
        }
        assertThat(server.get("/health").statusCode()).isEqualTo(200);
        assertThat(server.post("/v1/records?durability=on", "fine".getBytes()).statusCode()).isEqualTo(200);
        assertThat(server.output()).contains("malformed frame");
    }

    @Test
    void shouldAnswerBadInputWithClearErrorsAndKeepServing() throws Exception {
        ServerProcess server = plain;
        assertError(server.get("/v1/records?from=12/xyz"), 400, "not an LSN");
        assertError(server.post("/v1/records?durability=sometimes", new byte[1]), 400, "unknown durability");
        assertError(server.post("/v1/records?type=70000", new byte[1]), 400, "type");
        assertError(server.get("/v1/records?limit=0"), 400, "limit");
        assertError(server.get("/v1/records?visibility=maybe"), 400, "visibility");
        assertError(server.post("/v1/records", new byte[(16 << 20) + 1]), 413, "is over the largest a record may hold, 16MiB");
        try (Socket s = new Socket("127.0.0.1", server.port)) { // a body over max-batch-bytes is refused from its head
            s.getOutputStream().write(("POST /v1/records/batch HTTP/1.1\r\nHost: x\r\nContent-Length: 70000000\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            s.setSoTimeout(5000);
            assertThat(new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII))
                    .startsWith("HTTP/1.1 413").contains("\"error\":\"payload_too_large\"").contains("max-batch-bytes");
        }
        assertError(server.post("/v1/records/batch", new byte[0]), 400, "empty");
        assertError(server.post("/v1/records/batch", new byte[] {0, 0, 0, 9, 1, 2}), 400, "declares 9 bytes");
        assertError(server.send("DELETE", "/v1/records"), 405, "not allowed");
        assertError(server.get("/nope"), 404, "no endpoint");
        assertError(server.post("/admin/checkpoint?lsn=oops", new byte[0]), 400, "not an LSN");
        long before = Lsn.parse(JSON.readTree(server.post("/v1/records?durability=local", "before".getBytes()).body())
                .get("lsn").asText());
        byte[] forged = ForgedRecords.record(before, 666, "forged".getBytes(StandardCharsets.UTF_8));
        long outer = Lsn.parse(JSON.readTree(server.post("/v1/records?durability=local", forged).body()).get("lsn").asText());
        assertError(server.get("/v1/records?from=" + Lsn.format(outer + 24)), 400, "not a record boundary");
        assertError(server.get("/v1/records/stream?from=" + Lsn.format(outer + 24)), 400, "not a record boundary");
        assertThat(JSON.readTree(server.get("/v1/records?from=" + Lsn.format(outer)).body()).at("/records/0/type").asInt())
                .as("the outer record reads as itself").isZero();
        try (Socket s = new Socket("127.0.0.1", server.port)) {
            OutputStream out = s.getOutputStream();
            out.write(new byte[] {0x16, 0x03, 0x01, 0x00, (byte) 0xff, 'G', '\r', '\n', '\r', '\n'});
            out.flush();
            s.setSoTimeout(5000);
            String answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            assertThat(answer).startsWith("HTTP/1.1 400");
        }
        assertThat(server.post("/v1/records", "still here".getBytes()).statusCode()).isEqualTo(200);
        assertThat(server.get("/health").statusCode()).isEqualTo(200);
    }

    @Test
    void shouldRefuseLargeBodiesOnPathsThatAreNotAppendsDeclaredOrChunked() throws Exception {
        ServerProcess server = plain;
        assertError(server.post("/health", new byte[1 << 20]), 413, "exceeds the request limit of 4KiB");
        assertError(server.post("/nope", new byte[5000]), 413, "the request limit of 4KiB for POST /nope");
        try (Socket s = new Socket("127.0.0.1", server.port)) { // chunked: counted as it arrives, refused mid-body
            OutputStream out = s.getOutputStream();
            out.write("PUT /admin/sync-replicas HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            for (int i = 0; i < 8; i++) {
                out.write(("400\r\n" + "a".repeat(1024) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            }
            out.flush();
            s.setSoTimeout(5000);
            assertThat(new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII))
                    .startsWith("HTTP/1.1 413").contains("payload_too_large");
        }
        assertThat(server.post("/v1/records", new byte[100_000]).statusCode()).as("appends take large bodies").isEqualTo(200);
        assertThat(server.get("/health").statusCode()).isEqualTo(200);
    }

    @Test
    void aRefusalIsNotResetByTheBodyItsClientKeepsSending() throws Exception {
        try (Socket s = new Socket("127.0.0.1", plain.port)) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write("POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII); // the answer, then EOF
            assertThat(answer).startsWith("HTTP/1.1 413").contains("payload_too_large");
            // The client did not read the server's FIN as the end of its request: it goes on sending the body it
            // declared. A server that closed (rather than half-closed) resets such a connection at the first bytes, and
            // its next write fails; a reset that comes before the client read the answer destroys the answer.
            byte[] chunk = new byte[1024];
            for (int i = 0; i < 20; i++) {
                out.write(chunk);
                out.flush();
                Thread.sleep(10); // lets a reset, if the server sends one, arrive before the next write
            }
        }
        assertThat(plain.get("/health").statusCode()).isEqualTo(200);
    }

    @Test
    void shouldAnswerConnectionsBeyondTheCapWith503AndAcceptAgainOnceOneCloses() throws Exception {
        try (ServerProcess server = ServerProcess.start(work, data(), ServerProcess.freePort(), "--max-connections", "3")) {
            List<Socket> held = new ArrayList<>();
            try {
                // Every open connection counts, the one this test's HTTP client keeps alive included. Then connections
                // are opened, each answered (so counted at its start) and kept alive, until one is refused.
                assertThat(server.get("/health").statusCode()).isEqualTo(200);
                String refusal = null;
                while (refusal == null && held.size() < 10) {
                    Socket s = new Socket("127.0.0.1", server.port);
                    s.setSoTimeout(5000);
                    s.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    String status = statusLine(s);
                    if (status.equals("HTTP/1.1 200 OK")) {
                        held.add(s);
                    } else {
                        try (s) {
                            refusal = status + "\n" + new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
                        }
                    }
                }
                assertThat(held).as("connections open beside the HTTP client's").hasSize(2);
                assertThat(refusal).startsWith("HTTP/1.1 503").contains("too_many_connections");
                held.remove(0).close();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                int status = 0;
                while (status != 200 && System.nanoTime() < deadline) {
                    try (Socket again = new Socket("127.0.0.1", server.port)) {
                        again.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                                .getBytes(StandardCharsets.US_ASCII));
                        again.setSoTimeout(5000);
                        status = new String(again.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).startsWith("HTTP/1.1 200")
                                ? 200 : 503;
                    }
                }
                assertThat(status).isEqualTo(200);
            } finally {
                for (Socket s : held) {
                    s.close();
                }
            }
        }
    }

    @Test
    void shouldRefuseABatchOfMillionsOfEmptyRecordsWhileHealthStaysUnderASecond() throws Exception {
        ServerProcess server = plain;
        String end = JSON.readTree(server.get("/admin/status").body()).get("insert_lsn").asText();
        AtomicLong slowest = new AtomicLong();
        AtomicBoolean done = new AtomicBoolean();
        Thread prober = new Thread(() -> {
            while (!done.get()) {
                long t0 = System.nanoTime();
                try {
                    server.get("/health");
                } catch (Exception e) {
                    return;
                }
                slowest.accumulateAndGet(System.nanoTime() - t0, Math::max);
            }
        });
        prober.start();
        try {
            // 32 MiB of zeros: 8 M zero-length records
            assertError(server.post("/v1/records/batch", new byte[32 << 20]), 413, "max-batch-records");
        } finally {
            done.set(true);
            prober.join();
        }
        assertThat(TimeUnit.NANOSECONDS.toMillis(slowest.get())).as("slowest /health meanwhile, ms").isLessThan(1000);
        assertThat(JSON.readTree(server.get("/v1/records?from=" + end).body()).get("records")).as("nothing was written")
                .isEmpty();
        // On a server whose max-batch-bytes is 1 MiB:
        ByteBuffer body = ByteBuffer.allocate(12 * 40_000);
        while (body.hasRemaining()) {
            body.putInt(8).putLong(42);
        }
        assertError(limited.post("/v1/records/batch", body.array()), 413, "64 bytes of overhead per record");
        ByteBuffer fits = ByteBuffer.allocate(12 * 1000);
        while (fits.hasRemaining()) {
            fits.putInt(8).putLong(7);
        }
        HttpResponse<String> ok = limited.post("/v1/records/batch?durability=local", fits.array());
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
        assertThat(JSON.readTree(ok.body()).get("lsns")).hasSize(1000);
    }

    @Test
    void shouldCloseAStreamWhoseClientStoppedReadingAndFreeItsReaderSlot() throws Exception {
        ServerProcess server = limited; // --max-readers 1 --stream-write-timeout-ms 1000
        try (Socket stalled = new Socket()) {
            stalled.setReceiveBufferSize(4096);
            stalled.connect(new InetSocketAddress("127.0.0.1", server.port));
            stalled.getOutputStream().write("GET /v1/records/stream?from=0/0 HTTP/1.1\r\nHost: x\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            stalled.getOutputStream().flush();
            stalled.setSoTimeout(5000);
            // Its status line arrived: the stream runs, on the only reader slot. The client reads nothing more.
            assertThat(statusLine(stalled)).isEqualTo("HTTP/1.1 200 OK");
            assertError(server.get("/v1/records?from=0/0"), 503, "busy"); // the stream holds the only slot
            for (int i = 0; i < 100; i++) { // far more than the socket buffers hold; the client reads none of it
                server.post("/v1/records?durability=off", new byte[64 << 10]);
            }
            waitUntil(() -> server.get("/v1/records?from=0/0&limit=1").statusCode() != 503);
            HttpResponse<String> read = server.get("/v1/records?from=0/0&limit=1");
            assertThat(read.statusCode()).as("the stalled stream was closed and its slot freed: " + read.body()).isEqualTo(200);
            assertThat(server.output()).contains("took nothing for 1s (stream-write-timeout)");
        }
    }

    @Test
    void shouldNameFilesButNeverTheServersAbsolutePathsInErrorBodies() throws Exception {
        try (ServerProcess server = ServerProcess.start(work, data(), ServerProcess.freePort())) {
            long lsn = Lsn.parse(JSON.readTree(server.post("/v1/records?durability=local", "to be damaged".getBytes()).body())
                    .get("lsn").asText());
            try (FileChannel ch = FileChannel.open(data().resolve("0000000000000000.wal"),
                    StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap(new byte[] {'X'}), lsn + 30); // inside the payload: its CRC no longer matches
            }
            HttpResponse<String> r = server.get("/v1/records?from=" + Lsn.format(lsn));
            assertThat(r.statusCode()).as(r.body()).isEqualTo(500);
            String detail = JSON.readTree(r.body()).get("detail").asText();
            assertThat(detail).contains("0000000000000000.wal").contains("CRC");
            assertThat(detail).doesNotContain(data().toAbsolutePath().toString()).doesNotContain(work.toString());
        }
    }

    @Test
    void shouldRefuseToAcceptReplicasOffLoopbackWithoutTlsAndAuthenticationUnlessOptedOut() throws Exception {
        String replication = "0.0.0.0:" + ServerProcess.freePort();
        WaldenJar.Run refused = WaldenJar.run(work, "serve", "--data-dir", data().toString(), "--http",
                "127.0.0.1:" + ServerProcess.freePort(), "--replication-listen", replication);
        assertThat(refused.exitCode()).isEqualTo(2);
        assertThat(refused.stderr()).contains("refusing to accept replicas").contains("--replication-insecure");
        WaldenJar.Run secretOnly = WaldenJar.run(work, "serve", "--data-dir", data().toString(), "--http",
                "127.0.0.1:" + ServerProcess.freePort(), "--replication-listen", replication, "--replication-secret", "x");
        assertThat(secretOnly.exitCode()).isEqualTo(2);
        assertThat(secretOnly.stderr()).contains("without TLS");

        try (ServerProcess server = ServerProcess.start(work, data(), ServerProcess.freePort(),
                "--replication-listen", "0.0.0.0:" + ServerProcess.freePort(), "--replication-insecure")) {
            assertThat(server.output()).contains("INSECURE");
            assertThat(server.post("/v1/records", "x".getBytes()).statusCode()).isEqualTo(200);
        }
    }

    @Test
    void shouldRequireATokenOffLoopbackAndCheckIt() throws Exception {
        WaldenJar.Run refused = WaldenJar.run(work, "serve", "--data-dir", data().toString(), "--http", "0.0.0.0:" + ServerProcess.freePort());
        assertThat(refused.exitCode()).isEqualTo(2);
        assertThat(refused.stderr()).contains("without an auth token");

        WaldenJar.Run open = WaldenJar.run(work, "serve", "--data-dir", data().toString(), "--http",
                "127.0.0.1:" + ServerProcess.freePort(), "--auth-token", "s3cret", "--replication-listen",
                "127.0.0.1:" + ServerProcess.freePort());
        assertThat(open.exitCode()).as("a token on HTTP and none on the replication port").isEqualTo(2);
        assertThat(open.stderr()).contains("without authentication while the HTTP API requires a token")
                .contains("--replication-secret");

        try (ServerProcess server = ServerProcess.start(work, data(), ServerProcess.freePort(), "--auth-token", "s3cret",
                "--replication-secret", "r3plica")) {
            assertError(server.post("/v1/records", "x".getBytes()), 401, "Bearer");
            assertError(server.post("/v1/records", "x".getBytes(), "Authorization", "Bearer wrong"), 401, "Bearer");
            assertThat(server.post("/v1/records", "x".getBytes(), "Authorization", "Bearer s3cret").statusCode()).isEqualTo(200);
            assertThat(server.get("/health").statusCode()).as("liveness stays open").isEqualTo(200);
            try (Socket s = new Socket("127.0.0.1", server.port)) { // refused before a byte of the body is buffered
                s.getOutputStream().write(("POST /v1/records HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                s.setSoTimeout(5000);
                assertThat(new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII)).startsWith("HTTP/1.1 401");
            }
        }
    }

    @Test
    void shouldTakeSettingsFromAConfigFileWithFlagsWinning() throws Exception {
        Path yaml = work.resolve("walden.yaml");
        Files.writeString(yaml, "data-dir: " + data() + "\ndurability: on\nsync-method: fsync\nsegment-size: 1048576\n");
        try (ServerProcess server = ServerProcess.start(work, data(), ServerProcess.freePort(), "--config", yaml.toString(),
                "--durability", "off")) {
            JsonNode status = JSON.readTree(server.get("/admin/status").body());
            assertThat(status.get("durability").asText()).isEqualTo("off");
            assertThat(status.get("sync_method").asText()).isEqualTo("fsync");
        }
        Files.writeString(yaml, "durability: on\n"); // YAML 1.1 would read that as a boolean
        try (ServerProcess server = ServerProcess.start(work, data(), ServerProcess.freePort(), "--config", yaml.toString())) {
            JsonNode status = JSON.readTree(server.get("/admin/status").body());
            assertThat(status.get("durability").asText()).isEqualTo("on");
            assertThat(JSON.readTree(server.get("/admin/segments").body()).at("/segments/0/bytes").asLong())
                    .as("an existing log keeps its segment size without the flag").isEqualTo(1048576);
        }
        Files.writeString(yaml, "http: 0.0.0.0:" + ServerProcess.freePort() + "\nauth-token: ~\n");
        WaldenJar.Run empty = WaldenJar.run(work, "serve", "--config", yaml.toString());
        assertThat(empty.exitCode()).as("a null token never becomes the token 'null'").isEqualTo(2);
        assertThat(empty.stderr()).contains("auth-token: has no value");
        Files.writeString(yaml, "durabilty: local\n");
        WaldenJar.Run bad = WaldenJar.run(work, "serve", "--config", yaml.toString());
        assertThat(bad.exitCode()).isEqualTo(2);
        assertThat(bad.stderr()).contains("unknown setting 'durabilty'");
    }

    @Test
    void shouldAnswerPipelinedRequestsInOrder() throws Exception {
        ServerProcess server = plain;
        try (Socket s = new Socket("127.0.0.1", server.port)) {
            long start = Lsn.parse(JSON.readTree(server.get("/admin/status").body()).get("insert_lsn").asText());
            String afterFirst = Lsn.format(start + 40); // the 5-byte record takes 24 + 8 (its time) + 5 bytes, aligned to 40
            String pipelined = "POST /v1/records?durability=on HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nfirst"
                    + "GET /v1/records?from=" + afterFirst + "&wait_ms=1000 HTTP/1.1\r\nHost: x\r\n\r\n" // slow: long-polls
                    + "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "POST /v1/records?durability=off HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nConnection: close\r\n\r\nsecond";
            s.getOutputStream().write(pipelined.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            s.setSoTimeout(10_000);
            String answers = new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            int first = answers.indexOf("\"durability\":\"on\"");
            int poll = answers.indexOf("{\"records\":[]");
            int health = answers.indexOf("{\"status\":\"alive\"}");
            int second = answers.indexOf("\"durability\":\"off\"");
            assertThat(first).as(answers).isPositive();
            assertThat(poll).as(answers).isGreaterThan(first);
            assertThat(health).as(answers).isGreaterThan(poll);
            assertThat(second).as(answers).isGreaterThan(health);
        }
    }

    @Test
    void shouldRefuseReadsBeyondMaxReadersAtOnce() throws Exception {
        ServerProcess server = limited; // --max-readers 1
        String end = JSON.readTree(server.get("/admin/status").body()).get("insert_lsn").asText();
        Thread poll = new Thread(() -> {
            try {
                HttpResponse<String> r;
                do { // asked again while refused: the check below may hold the slot at the instant this arrives
                    r = server.get("/v1/records?from=" + end + "&wait_ms=10000");
                } while (r.statusCode() == 503);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        poll.start();
        waitUntil(() -> server.get("/v1/records?from=" + end).statusCode() == 503); // the long poll holds the slot
        long t0 = System.nanoTime();
        assertError(server.get("/v1/records?from=" + end), 503, "busy");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isLessThan(2000);
        assertThat(server.post("/v1/records?durability=local", "ends the long poll".getBytes()).statusCode()).isEqualTo(200);
        poll.join();
    }

    /** The value of one series in Prometheus text; 0 while the server has not made it. */
    private static double sample(String metrics, String series) {
        return metrics.lines().filter(l -> l.startsWith(series + " "))
                .mapToDouble(l -> Double.parseDouble(l.substring(series.length() + 1))).findFirst().orElse(0);
    }

    /** A response's status line, read from {@code s} byte by byte: nothing after it is read. */
    private static String statusLine(Socket s) throws IOException {
        StringBuilder line = new StringBuilder();
        InputStream in = s.getInputStream();
        for (int b = in.read(); b != -1 && b != '\n'; b = in.read()) {
            line.append((char) b);
        }
        return line.toString().strip();
    }

    private static void assertError(HttpResponse<String> r, int status, String detail) throws Exception {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        JsonNode body = JSON.readTree(r.body());
        assertThat(body.has("error")).as(r.body()).isTrue();
        assertThat(body.get("detail").asText()).containsIgnoringCase(detail);
    }

}
