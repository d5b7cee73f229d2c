package io.walden.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.luben.zstd.Zstd;
import io.walden.core.Compression;
import io.walden.core.Lsn;
import io.walden.core.internal.recovery.LogInspector;
import io.walden.server.OrderEvents;
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
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code --compression} and {@code ?compression=} over real HTTP to an in-process server: stored smaller, read back unchanged. */
@Timeout(60)
class HttpCompressionTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final byte[] EVENT = "{\"event\":\"order-placed\",\"currency\":\"EUR\",\"amount\":12.5} ".repeat(30)
            .getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;
    private WaldenServer server;
    private final HttpClient http = ContractCheckedClient.create();

    @BeforeEach
    void start() throws Exception {
        server = new WaldenServer(ServerConfig.load(null, Map.of("data-dir", dir.resolve("log").toString(),
                "http", "127.0.0.1:0", "replication-listen", "127.0.0.1:0", "durability", "local",
                "compression", "zstd"))).start();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private HttpResponse<String> post(String path, byte[] body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.boundAddress().getPort() + path))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private List<Compression> storedAs() throws Exception {
        server.wal().flush();
        List<Compression> out = new ArrayList<>();
        new LogInspector(server.wal().directory()).inspect(new LogInspector.Visitor() {
            @Override
            public boolean onRecord(LogInspector.RecordInfo r) {
                if (!r.padding()) {
                    out.add(r.compression());
                }
                return true;
            }
        });
        return out;
    }

    @Test
    void shouldStoreAppendsWithTheServersCompressionAndReadThemBackUnchanged() throws Exception {
        HttpResponse<String> appended = post("/v1/records", EVENT);
        assertThat(appended.statusCode()).as(appended.body()).isEqualTo(200);
        String lsn = JSON.readTree(appended.body()).get("lsn").asText();
        JsonNode page = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                + server.boundAddress().getPort() + "/v1/records?from=" + lsn)).build(), HttpResponse.BodyHandlers.ofString()).body());
        assertThat(Base64.getDecoder().decode(page.get("records").get(0).get("data").asText())).isEqualTo(EVENT);
        assertThat(storedAs()).containsExactly(Compression.ZSTD);
        assertThat(server.wal().insertLsn() - Lsn.parse(lsn)).as("record bytes").isLessThan(EVENT.length / 4);
    }

    @Test
    void shouldLetARequestChooseItsCompressionForOneRecordOrABatch() throws Exception {
        assertThat(post("/v1/records?compression=lz4", EVENT).statusCode()).isEqualTo(200);
        assertThat(post("/v1/records?durability=off&compression=none", EVENT).statusCode()).isEqualTo(200);
        ByteBuffer batch = ByteBuffer.allocate(2 * (4 + EVENT.length));
        batch.putInt(EVENT.length).put(EVENT).putInt(EVENT.length).put(EVENT);
        HttpResponse<String> batched = post("/v1/records/batch?compression=LZ4", batch.array());
        assertThat(batched.statusCode()).as(batched.body()).isEqualTo(200);
        assertThat(storedAs()).containsExactly(Compression.LZ4, Compression.NONE, Compression.LZ4, Compression.LZ4);
    }

    @Test
    void shouldRefuseAnUnknownCompressionAndAppendNothing() throws Exception {
        long end = server.wal().insertLsn();
        HttpResponse<String> refused = post("/v1/records?compression=brotli", EVENT);
        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(refused.body()).get("error").asText()).isEqualTo("bad_parameter");
        assertThat(refused.body()).contains("none, lz4 or zstd");
        assertThat(server.wal().insertLsn()).isEqualTo(end);
    }

    /**
     * Appends over HTTP run on the event loop, which never waits: the log's zstd dictionary (docs/format.md, "zstd
     * dictionaries") must still be trained from them and copied into the segment before the records that use it.
     */
    @Test
    void shouldCompressSmallZstdAppendsWithTheLogsTrainedDictionaryAndReadThemBack() throws Exception {
        long deadline = System.nanoTime() + 40_000_000_000L;
        int i = 0;
        while (controlRecords() == 0) { // the dictionary's first copy comes with the first append after the training
            assertThat(System.nanoTime()).as("a dictionary within 40 s").isLessThan(deadline);
            for (int n = 0; n < 200; n++, i++) {
                assertThat(post("/v1/records", OrderEvents.event(i)).statusCode()).isEqualTo(200);
            }
        }
        String first = JSON.readTree(post("/v1/records", OrderEvents.event(i)).body()).get("lsn").asText();
        long before = server.wal().insertLsn();
        for (int n = 1; n < 100; n++) {
            assertThat(post("/v1/records", OrderEvents.event(i + n)).statusCode()).isEqualTo(200);
        }
        long perRecord = (server.wal().insertLsn() - before) / 99;
        long alone = 24 + 4 + Zstd.compress(OrderEvents.event(i), 3).length; // header, prefix, the frame
        assertThat(perRecord).as("bytes per record with the dictionary; compressed alone: %d", alone)
                .isLessThan(alone * 6 / 10);
        JsonNode page = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                + server.boundAddress().getPort() + "/v1/records?from=" + first + "&limit=100")).build(),
                HttpResponse.BodyHandlers.ofString()).body());
        for (int n = 0; n < 100; n++) {
            assertThat(Base64.getDecoder().decode(page.get("records").get(n).get("data").asText())).isEqualTo(OrderEvents.event(i + n));
        }
    }

    private long controlRecords() throws Exception {
        server.wal().flush();
        long[] count = new long[1];
        new LogInspector(server.wal().directory()).inspect(new LogInspector.Visitor() {
            @Override
            public boolean onRecord(LogInspector.RecordInfo r) {
                if (r.control()) {
                    count[0]++;
                }
                return true;
            }
        });
        return count[0];
    }
}
