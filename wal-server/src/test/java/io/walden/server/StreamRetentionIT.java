package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Lsn;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A reader that falls behind a server whose retention removes segments (a {@code walden.jar} with a small
 * {@code --retention-bytes} and {@code --segment-size}) is told so, never left to take a gap for a clean end: a stream
 * ends with an error line (NDJSON) or an error frame (binary) saying {@code lsn_removed}, the server logs it at WARN,
 * and {@code walden tail} says so and exits non-zero (docs/http-api.md, the stream's end).
 */
@Timeout(value = 180, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class StreamRetentionIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int SEGMENT = 1 << 20;
    /** Far more than a reader's socket buffers hold, so that retention passes a reader that takes nothing meanwhile. */
    private static final long APPENDED_PER_TEST = 48L << 20;

    @TempDir
    static Path work;
    private static ServerProcess server;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() throws Exception {
        server = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort(), "--segment-size", "1MiB",
                "--retention-bytes", "2MiB", "--durability", "local", "--stream-write-timeout", "120s");
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    /** Appends {@link #APPENDED_PER_TEST} bytes of 16 KB records and waits until retention kept only the last few MiB. */
    private static void outgrowRetention() throws Exception {
        byte[] payload = new byte[16_000];
        ByteBuffer batch = ByteBuffer.allocate(200 * (4 + payload.length));
        for (int i = 0; i < 200; i++) {
            batch.putInt(payload.length).put(payload);
        }
        long end = 0;
        for (long done = 0; done < APPENDED_PER_TEST; done += batch.capacity()) {
            HttpResponse<String> r = server.post("/v1/records/batch", batch.array());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            end = Lsn.parse(JSON.readTree(r.body()).get("lsns").get(199).asText());
        }
        long last = end;
        waitUntil(() -> Lsn.parse(status().get("oldest_lsn").asText()) > last - 4L * SEGMENT);
    }

    private static JsonNode status() throws Exception {
        return JSON.readTree(server.get("/admin/status").body());
    }

    private HttpResponse<InputStream> stream(String accept) throws Exception {
        String from = status().get("insert_lsn").asText();
        HttpResponse<InputStream> r = http.send(HttpRequest.newBuilder(server.uri("/v1/records/stream?from=" + from))
                .header("Accept", accept).build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).isEqualTo(200);
        return r;
    }

    @Test
    void anNdjsonStreamWhoseNextSegmentRetentionRemovedEndsWithTheErrorAPlainReadWouldAnswer() throws Exception {
        HttpResponse<InputStream> r = stream("application/x-ndjson");
        outgrowRetention(); // the stream takes nothing meanwhile

        List<JsonNode> lines = new ArrayList<>();
        try (InputStream in = r.body()) {
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                lines.add(JSON.readTree(line));
            }
        }
        // Records (as many as the stream read before it fell behind, maybe none), then the error, last.
        JsonNode last = lines.get(lines.size() - 1);
        assertThat(lines.subList(0, lines.size() - 1)).allSatisfy(l -> assertThat(l.has("lsn")).isTrue());
        assertThat(last.get("error").asText()).as(last.toString()).isEqualTo("lsn_removed");
        if (lines.size() > 1) {
            assertThat(Lsn.parse(last.get("oldest_lsn").asText())).as("a gap after the last record received")
                    .isGreaterThan(Lsn.parse(lines.get(lines.size() - 2).get("lsn").asText()));
        }
        waitUntil(() -> server.output().contains("WARN") && server.output().contains("with lsn_removed"));
    }

    @Test
    void aBinaryStreamWhoseNextSegmentRetentionRemovedEndsWithAnErrorFrame() throws Exception {
        HttpResponse<InputStream> r = stream("application/octet-stream");
        outgrowRetention();

        long lastRecord = -1;
        JsonNode error = null;
        try (DataInputStream in = new DataInputStream(r.body())) {
            while (true) {
                long lsn;
                try {
                    lsn = in.readLong();
                } catch (EOFException end) {
                    break;
                }
                in.readUnsignedShort();
                byte[] payload = in.readNBytes(in.readInt());
                assertThat(error).as("nothing after the error frame").isNull();
                if (lsn == -1L) {
                    error = JSON.readTree(payload);
                } else {
                    lastRecord = lsn;
                }
            }
        }
        assertThat(error).as("the last frame is an error frame (LSN FFFFFFFF/FFFFFFFF)").isNotNull();
        assertThat(error.get("error").asText()).isEqualTo("lsn_removed");
        assertThat(Lsn.parse(error.get("oldest_lsn").asText())).as("a gap after the last record received, if any")
                .isGreaterThan(lastRecord);
    }

    @Test
    void aTailThatFellBehindRetentionSaysSoAndExitsNonZero() throws Exception {
        HttpResponse<String> first = server.post("/v1/records", new byte[16_000]);
        String from = JSON.readTree(first.body()).get("lsn").asText();
        server.post("/v1/records/batch", batchOf(20)); // more than the pipe holds: the tail blocks on its first page
        // The tail prints into a pipe nobody reads until the gate file exists: it falls behind while the log grows.
        Path gate = work.resolve("gate");
        Path status = work.resolve("tail.status");
        Path err = work.resolve("tail.err");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder("sh", "-c", "{ '" + java + "' -jar '" + WaldenJar.jar().toAbsolutePath()
                + "' tail --from " + from + " --page 10 --follow 2>'" + err + "'; echo $? > '" + status + "'; } | { while [ ! -e '"
                + gate + "' ]; do sleep 0.1; done; cat > /dev/null; }");
        pb.environment().put("WALDEN_URL", server.uri("").toString());
        Process p = pb.start();
        try {
            outgrowRetention();
            Files.createFile(gate);
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the tail stops").isTrue();
        } finally {
            p.destroyForcibly();
        }
        assertThat(Files.readString(status).strip()).isEqualTo("2");
        assertThat(Files.readString(err)).contains("410 lsn_removed").contains("the oldest kept LSN is");
    }

    private static byte[] batchOf(int records) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < records; i++) {
            out.writeBytes(ByteBuffer.allocate(4).putInt(16_000).array());
            out.writeBytes(new byte[16_000]);
        }
        return out.toByteArray();
    }
}
