package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.InputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reads and streams as binary frames ({@code Accept: application/octet-stream}; docs/http-api.md, "Binary records"):
 * the same records as the JSON answers, byte for byte, with no base64 on either side.
 *
 * <p>The tests share one server started for the class (a frames batch is posted to a server of its own, empty): each
 * reads from the LSN of the first record it appended, so it passes alone and in any order; the tests of a class run
 * one after another ({@code junit.jupiter.execution.parallel.mode.default = same_thread}).
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a stream read blocks: fail, never hang
class BinaryRecordsIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path work;
    @AutoClose
    private static ServerProcess shared;

    @BeforeAll
    static void startSharedServer() throws Exception {
        shared = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort());
    }

    record Frame(long lsn, int type, byte[] payload) {
    }

    private static List<Frame> frames(ByteBuffer b) {
        List<Frame> out = new ArrayList<>();
        while (b.hasRemaining()) {
            long lsn = b.getLong();
            int type = Short.toUnsignedInt(b.getShort());
            byte[] payload = new byte[b.getInt()];
            b.get(payload);
            out.add(new Frame(lsn, type, payload));
        }
        return out;
    }

    private static List<Frame> framesOfJson(JsonNode page) {
        List<Frame> out = new ArrayList<>();
        for (JsonNode r : page.get("records")) {
            String[] lsn = r.get("lsn").asText().split("/");
            out.add(new Frame((Long.parseLong(lsn[0], 16) << 32) | Long.parseLong(lsn[1], 16), r.get("type").asInt(),
                    Base64.getDecoder().decode(r.get("data").asText())));
        }
        return out;
    }

    /**
     * Records of every kind: binary bytes (zeros, 0xFF), an empty one, types up to 65535, one compressed; 41 in all.
     * Returns the first one's LSN.
     */
    private static String appendMixed(ServerProcess server) throws Exception {
        Random random = new Random(7);
        String first = null;
        for (int i = 0; i < 40; i++) {
            byte[] payload = new byte[i == 5 ? 0 : random.nextInt(3000)];
            random.nextBytes(payload);
            int type = i == 7 ? 65535 : i % 5;
            HttpResponse<String> appended = server.post("/v1/records?durability=local&type=" + type, payload);
            assertThat(appended.statusCode()).isEqualTo(200);
            if (first == null) {
                first = JSON.readTree(appended.body()).get("lsn").asText();
            }
        }
        byte[] json = "{\"event\":\"repeated\",\"event2\":\"repeated\",\"event3\":\"repeated\"}".repeat(50).getBytes(StandardCharsets.UTF_8);
        assertThat(server.post("/v1/records?durability=local&compression=zstd", json).statusCode()).isEqualTo(200);
        return first;
    }

    @Test
    void aBinaryReadHoldsTheSameRecordsAsTheJsonReadAndSaysWhereToContinue() throws Exception {
        ServerProcess server = shared;
        String first = appendMixed(server);
        JsonNode page = JSON.readTree(server.get("/v1/records?limit=25&from=" + first).body());
        HttpResponse<byte[]> binary = server.http.send(HttpRequest.newBuilder(server.uri("/v1/records?limit=25&from=" + first))
                .header("Accept", "application/octet-stream").build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(binary.statusCode()).isEqualTo(200);
        assertThat(binary.headers().firstValue("content-type")).hasValue("application/octet-stream");
        assertThat(binary.headers().firstValue("walden-next")).hasValue(page.get("next").asText());
        List<Frame> fromBinary = frames(ByteBuffer.wrap(binary.body()));
        List<Frame> fromJson = framesOfJson(page);
        assertThat(fromBinary).hasSize(25).usingRecursiveFieldByFieldElementComparator().isEqualTo(fromJson);

        // The rest, from where the header said, includes the compressed record as it was appended.
        HttpResponse<byte[]> rest = server.http.send(HttpRequest.newBuilder(server.uri("/v1/records?limit=100&from="
                + page.get("next").asText())).header("Accept", "application/octet-stream").build(), HttpResponse.BodyHandlers.ofByteArray());
        List<Frame> tail = frames(ByteBuffer.wrap(rest.body()));
        assertThat(tail).hasSize(16);
        assertThat(new String(tail.get(15).payload(), StandardCharsets.UTF_8)).startsWith("{\"event\":\"repeated\"");
    }

    @Test
    void anEmptyBinaryPageHasNoBodyAndTheSameNext() throws Exception {
        ServerProcess server = shared;
        String one = JSON.readTree(server.post("/v1/records?durability=local", "one".getBytes(StandardCharsets.UTF_8))
                .body()).get("lsn").asText();
        String next = JSON.readTree(server.get("/v1/records?from=" + one).body()).get("next").asText();
        HttpResponse<byte[]> empty = server.http.send(HttpRequest.newBuilder(server.uri("/v1/records?from=" + next))
                .header("Accept", "application/octet-stream").build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(empty.statusCode()).isEqualTo(200);
        assertThat(empty.body()).isEmpty();
        assertThat(empty.headers().firstValue("walden-next")).hasValue(next);
    }

    @Test
    void aBinaryStreamCarriesTheSameFramesAsRecordsArrive() throws Exception {
        ServerProcess server = shared;
        String first = appendMixed(server);
        List<Frame> expected = framesOfJson(JSON.readTree(server.get("/v1/records?limit=1000&from=" + first).body()));
        assertThat(expected).hasSize(41);
        HttpResponse<InputStream> stream = server.http.send(HttpRequest.newBuilder(server.uri("/v1/records/stream?from=" + first))
                .header("Accept", "application/octet-stream").build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(stream.headers().firstValue("content-type")).hasValue("application/octet-stream");
        List<Frame> received = new ArrayList<>();
        try (DataInputStream in = new DataInputStream(stream.body())) {
            while (received.size() < expected.size() + 1) {
                if (received.size() == expected.size()) {
                    server.post("/v1/records?durability=local&type=9", "late".getBytes(StandardCharsets.UTF_8));
                }
                long lsn = in.readLong();
                int type = in.readUnsignedShort();
                byte[] payload = new byte[in.readInt()];
                in.readFully(payload);
                received.add(new Frame(lsn, type, payload));
            }
        }
        assertThat(received.subList(0, expected.size())).usingRecursiveFieldByFieldElementComparator().isEqualTo(expected);
        assertThat(received.get(expected.size()).type()).isEqualTo(9);
        assertThat(received.get(expected.size()).payload()).isEqualTo("late".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void framesReadFromOneLogArePostedToAnotherAsABatchKeepingEachRecordsType() throws Exception {
        ServerProcess source = shared;
        try (ServerProcess target = ServerProcess.start(work, work.resolve("target"), ServerProcess.freePort())) {
            String first = appendMixed(source);
            byte[] page = source.http.send(HttpRequest.newBuilder(source.uri("/v1/records?limit=1000&from=" + first))
                    .header("Accept", "application/octet-stream").build(), HttpResponse.BodyHandlers.ofByteArray()).body();
            HttpResponse<String> posted = target.post("/v1/records/batch?durability=local", page,
                    "Content-Type", "application/vnd.walden.frames");
            assertThat(posted.statusCode()).as(posted.body()).isEqualTo(200);
            assertThat(JSON.readTree(posted.body()).get("lsns")).hasSize(41);
            List<Frame> copied = framesOfJson(JSON.readTree(target.get("/v1/records?limit=1000").body()));
            List<Frame> original = frames(ByteBuffer.wrap(page));
            assertThat(copied).hasSize(original.size());
            for (int i = 0; i < original.size(); i++) {
                assertThat(copied.get(i).type()).isEqualTo(original.get(i).type());
                assertThat(copied.get(i).payload()).isEqualTo(original.get(i).payload());
            }
        }
    }

    @Test
    void aTruncatedFrameIsRefusedAndNothingIsAppended() throws Exception {
        ServerProcess server = shared;
        String end = JSON.readTree(server.get("/admin/status").body()).get("insert_lsn").asText();
        ByteBuffer frame = ByteBuffer.allocate(14 + 5).putLong(0).putShort((short) 3).putInt(5).put("hello".getBytes(StandardCharsets.UTF_8));
        byte[] body = new byte[frame.capacity() + 10];
        System.arraycopy(frame.array(), 0, body, 0, frame.capacity()); // then 10 bytes of a second, cut-off header
        HttpResponse<String> refused = server.post("/v1/records/batch", body, "Content-Type", "application/vnd.walden.frames");
        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(refused.body()).contains("14-byte record header");
        assertThat(JSON.readTree(server.get("/v1/records?from=" + end).body()).get("records")).isEmpty();
    }
}
