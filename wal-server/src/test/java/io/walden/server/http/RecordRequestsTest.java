package io.walden.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.server.WaldenServer;
import io.walden.server.config.ServerConfig;
import io.walden.server.contract.ContractCheckedClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@code /v1/records} makes of its inputs (docs/http-api.md): the times {@code from_time} takes, the media type
 * of a batch, and the headers of a negotiated answer. One in-process server over real HTTP for the class.
 */
@Timeout(60)
class RecordRequestsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dir;
    private static WaldenServer server;
    private static final HttpClient HTTP = ContractCheckedClient.create();

    @BeforeAll
    static void start() throws Exception {
        server = new WaldenServer(ServerConfig.load(null, Map.of("data-dir", dir.toString(), "http", "127.0.0.1:0",
                "replication-listen", "none", "durability", "local"))).start();
        send("POST", "/v1/records", HttpRequest.BodyPublishers.ofString("first"), null);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static HttpResponse<String> get(String target) throws Exception {
        return send("GET", target, HttpRequest.BodyPublishers.noBody(), null);
    }

    private static HttpResponse<String> send(String method, String target, HttpRequest.BodyPublisher body,
                                             String contentType) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(target)).method(method, body);
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static URI uri(String target) {
        return URI.create("http://127.0.0.1:" + server.boundAddress().getPort() + target);
    }

    @Test
    void aFromTimeBeyondWhatARecordTimeHoldsIsA400NamingTheRangeOnReadsAndStreams() throws Exception {
        for (String time : List.of("%2B300000-01-01T00:00:00Z", "-300000-01-01T00:00:00Z", "%2B999999999-12-31T23:59:59Z")) {
            for (String path : List.of("/v1/records", "/v1/records/stream")) {
                HttpResponse<String> r = get(path + "?from_time=" + time);
                assertThat(r.statusCode()).as(path + " " + time + ": " + r.body()).isEqualTo(400);
                JsonNode error = JSON.readTree(r.body());
                assertThat(error.get("error").asText()).isEqualTo("bad_parameter");
                assertThat(error.get("detail").asText()).startsWith("from_time: ")
                        .contains("outside the times a record can hold")
                        .contains("-290308-12-21T19:59:06.000000Z to +294247-01-10T04:00:54.775807Z");
            }
        }
    }

    @Test
    void aFromTimeIsReadWithItsPlusSentAsItIsAndWithAnOffsetWithoutAColon() throws Exception {
        for (String time : List.of("2020-01-01T01:00:00+01:00", "2020-01-01T01:00:00%2B01:00", "2020-01-01T00:00:00.000000%2B0000",
                "2020-01-01T01:00:00+0100")) {
            HttpResponse<String> r = get("/v1/records?limit=1&from_time=" + time);
            assertThat(r.statusCode()).as(time + ": " + r.body()).isEqualTo(200);
            assertThat(JSON.readTree(r.body()).get("records")).as(time).hasSize(1);
        }
    }

    @Test
    void aBatchIsFramesOnlyUnderTheFramesMediaTypeInAnyCaseWithAnyParameters() throws Exception {
        long end = server.wal().insertLsn();
        HttpResponse<String> misspelt = send("POST", "/v1/records/batch", frame(9, "x"), "application/vnd.walden.framesXYZ");
        assertThat(misspelt.statusCode()).as(misspelt.body()).isEqualTo(415);
        assertThat(JSON.readTree(misspelt.body()).get("error").asText()).isEqualTo("unsupported_media_type");
        assertThat(server.wal().insertLsn()).as("nothing appended").isEqualTo(end);

        HttpResponse<String> frames = send("POST", "/v1/records/batch", frame(9, "framed"),
                "Application/VND.Walden.Frames ; version=1");
        assertThat(frames.statusCode()).as(frames.body()).isEqualTo(200);
        String lsn = JSON.readTree(frames.body()).get("lsns").get(0).asText();
        JsonNode record = JSON.readTree(get("/v1/records?limit=1&from=" + lsn).body()).get("records").get(0);
        assertThat(record.get("type").asInt()).as("the frame's own type").isEqualTo(9);
    }

    @Test
    void aFramesBatchRefusesAStreamsErrorFrameRatherThanAppendItAsARecord() throws Exception {
        long end = server.wal().insertLsn();
        byte[] error = "{\"error\":\"lsn_removed\",\"detail\":\"gone\"}".getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(14 + error.length).putLong(-1L).putShort((short) 0).putInt(error.length).put(error);
        HttpResponse<String> r = send("POST", "/v1/records/batch", HttpRequest.BodyPublishers.ofByteArray(b.array()),
                "application/vnd.walden.frames");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
        assertThat(r.body()).contains("error frame");
        assertThat(server.wal().insertLsn()).as("nothing appended").isEqualTo(end);
    }

    @Test
    void aJsonReadAndAStreamSayVaryAcceptAsBinaryAnswersDo() throws Exception {
        HttpResponse<String> read = get("/v1/records?limit=1");
        assertThat(read.headers().firstValue("content-type")).hasValue("application/json");
        assertThat(read.headers().firstValue("vary")).hasValueSatisfying(v -> assertThat(v).isEqualToIgnoringCase("accept"));

        HttpResponse<InputStream> stream = HTTP.send(HttpRequest.newBuilder(uri("/v1/records/stream")).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        stream.body().close();
        assertThat(stream.headers().firstValue("vary")).hasValueSatisfying(v -> assertThat(v).isEqualToIgnoringCase("accept"));
    }

    /** One record frame (docs/http-api.md, "Binary records"): LSN (ignored by a batch), type, length, payload. */
    private static HttpRequest.BodyPublisher frame(int type, String payload) {
        byte[] p = payload.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(14 + p.length).putLong(0).putShort((short) type).putInt(p.length).put(p);
        return HttpRequest.BodyPublishers.ofByteArray(b.array());
    }
}
