package io.walden.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Lsn;
import io.walden.core.WalReader;
import io.walden.core.WalRecord;
import io.walden.server.WaldenServer;
import io.walden.server.config.ServerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * HTTP/1.1 pipelining on one connection, over a real socket to an in-process server: appends run at once and are
 * group-committed, answers come back in request order, a request sees the effects of every request before it, and a
 * client that pipelines more than a connection holds in flight loses nothing.
 */
@Timeout(60)
class HttpConnectionTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;
    private WaldenServer server;

    @BeforeEach
    void start() throws Exception {
        // Small segments: a burst of large appends keeps needing a segment the preparer has not made ready yet.
        server = new WaldenServer(ServerConfig.load(null, Map.of("data-dir", dir.resolve("log").toString(),
                "http", "127.0.0.1:0", "replication-listen", "127.0.0.1:0", "durability", "local",
                "segment-size", "65536"))).start();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private static String append(String payload, String level) {
        return "POST /v1/records?durability=" + level + " HTTP/1.1\r\nHost: x\r\nContent-Length: "
                + payload.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + payload;
    }

    /** Writes {@code requests} in one go and reads {@code count} answers (bodies parsed as JSON), in order. */
    private List<JsonNode> pipeline(String requests, int count) throws IOException {
        try (Socket s = new Socket("127.0.0.1", server.boundAddress().getPort())) {
            s.setSoTimeout(20_000);
            s.getOutputStream().write(requests.getBytes(StandardCharsets.UTF_8));
            s.getOutputStream().flush();
            InputStream in = new BufferedInputStream(s.getInputStream());
            List<JsonNode> answers = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                answers.add(readAnswer(in));
            }
            return answers;
        }
    }

    private static JsonNode readAnswer(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("the connection ended after " + head);
            }
            head.append((char) b);
        }
        String h = head.toString();
        assertThat(h).startsWith("HTTP/1.1 200");
        int at = h.toLowerCase(Locale.ROOT).indexOf("content-length:");
        int length = Integer.parseInt(h.substring(at + 15, h.indexOf('\r', at)).trim());
        return JSON.readTree(in.readNBytes(length));
    }

    @Test
    void shouldRunPipelinedAppendsAtOnceGroupCommittedAndAnswerThemInOrder() throws Exception {
        StringBuilder requests = new StringBuilder();
        for (int i = 0; i < 40; i++) {
            requests.append(append("record " + i, "local"));
        }
        long flushes = server.wal().status().flushCount();
        List<JsonNode> answers = pipeline(requests.toString(), 40);
        long last = -1;
        for (JsonNode a : answers) {
            long lsn = Lsn.parse(a.get("lsn").asText());
            assertThat(lsn).as("answers in request order").isGreaterThan(last);
            assertThat(a.get("durability").asText()).isEqualTo("local");
            last = lsn;
        }
        assertThat(server.wal().flushedLsn()).isGreaterThan(last);
        assertThat(server.wal().status().flushCount() - flushes).as("forty commits, far fewer flushes").isLessThan(20);
    }

    @Test
    void shouldShowARequestEveryAppendBeforeIt() throws Exception {
        long end = server.wal().insertLsn();
        List<JsonNode> answers = pipeline(append("first", "local") + append("second", "local")
                + "GET /v1/records?from=" + Lsn.format(end) + " HTTP/1.1\r\nHost: x\r\n\r\n", 3);
        JsonNode records = answers.get(2).get("records");
        assertThat(records).hasSize(2);
        assertThat(new String(Base64.getDecoder().decode(records.get(0).get("data").asText()), StandardCharsets.UTF_8)).isEqualTo("first");
        assertThat(new String(Base64.getDecoder().decode(records.get(1).get("data").asText()), StandardCharsets.UTF_8)).isEqualTo("second");
    }

    @Test
    void shouldLoseNothingWhenAClientPipelinesMoreThanAConnectionHoldsInFlight() throws Exception {
        int n = HttpConnection.MAX_IN_FLIGHT * 4;
        StringBuilder requests = new StringBuilder();
        for (int i = 0; i < n; i++) {
            requests.append(i % 3 == 0 ? "GET /health HTTP/1.1\r\nHost: x\r\n\r\n" : append("r" + i, i % 2 == 0 ? "off" : "local"));
        }
        List<JsonNode> answers = pipeline(requests.toString(), n);
        long last = -1;
        for (int i = 0; i < n; i++) {
            JsonNode a = answers.get(i);
            if (i % 3 == 0) {
                assertThat(a.get("status").asText()).isEqualTo("alive");
            } else {
                long lsn = Lsn.parse(a.get("lsn").asText());
                assertThat(lsn).isGreaterThan(last);
                last = lsn;
            }
        }
    }

    @Test
    void shouldKeepRequestOrderWhenAppendsMustWaitForTheNextSegment() throws Exception {
        // Records of 20 KB: three per 64 KiB segment, so a burst of them outruns the segment preparer, and those
        // appends finish off the event loop while the requests behind them wait.
        long start = server.wal().insertLsn();
        StringBuilder requests = new StringBuilder();
        List<String> payloads = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            String payload = ("record " + i + " ").repeat(3000).substring(0, 20_000);
            payloads.add(payload);
            requests.append(append(payload, i % 2 == 0 ? "off" : "local"));
        }
        List<JsonNode> answers = pipeline(requests.toString(), 60);
        long last = -1;
        List<Long> lsns = new ArrayList<>();
        for (JsonNode a : answers) {
            long lsn = Lsn.parse(a.get("lsn").asText());
            assertThat(lsn).as("the log follows the requests' order").isGreaterThan(last);
            last = lsn;
            lsns.add(lsn);
        }
        server.wal().flush();
        try (WalReader r = server.wal().reader(start)) {
            for (int i = 0; i < 60; i++) {
                WalRecord rec = r.next();
                assertThat(rec.lsn()).isEqualTo(lsns.get(i));
                assertThat(new String(rec.payload(), StandardCharsets.UTF_8)).as("record %d", i).isEqualTo(payloads.get(i));
            }
        }
        assertThat(server.wal().status().segmentCount()).as("the burst crossed many segments").isGreaterThan(15);
    }

    @Test
    void shouldAnswerEveryRequestOfAClientThatHalfClosesAndThenClose() throws Exception {
        try (Socket s = new Socket("127.0.0.1", server.boundAddress().getPort())) {
            s.setSoTimeout(20_000);
            s.getOutputStream().write((append("a", "local") + append("b", "local") + append("c", "local"))
                    .getBytes(StandardCharsets.UTF_8));
            s.shutdownOutput();
            InputStream in = new BufferedInputStream(s.getInputStream());
            for (int i = 0; i < 3; i++) {
                assertThat(readAnswer(in).get("durability").asText()).isEqualTo("local");
            }
            assertThat(in.read()).as("closed after the last answer").isEqualTo(-1);
        }
    }

    @Test
    void shouldEndAStreamWithItsLastChunkWhenTheClientHalfCloses() throws Exception {
        long from = server.wal().insertLsn();
        pipeline(append("streamed", "local"), 1);
        byte[] answer;
        try (Socket s = new Socket("127.0.0.1", server.boundAddress().getPort())) {
            s.setSoTimeout(20_000);
            s.getOutputStream().write(("GET /v1/records/stream?from=" + Lsn.format(from) + " HTTP/1.1\r\nHost: x\r\n\r\n")
                    .getBytes(StandardCharsets.UTF_8));
            s.shutdownOutput();
            answer = s.getInputStream().readAllBytes();
        }
        String text = new String(answer, StandardCharsets.UTF_8);
        assertThat(text).startsWith("HTTP/1.1 200").contains("chunked");
        assertThat(text).as("the terminating chunk: a well-formed response").endsWith("\r\n0\r\n\r\n");
    }
}
