package io.walden.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Durability;
import io.walden.server.WaldenServer;
import io.walden.server.config.ServerConfig;
import io.walden.server.contract.ContractCheckedClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A server on a log written by on-disk format 1 (wal-core's {@code format-1} sample: records without a time, and
 * cursor {@code reader} on one of them) says that cursor's lag in time is unknown, everywhere it shows it: null in
 * {@code GET /v1/cursors} and {@code /admin/status}, NaN in {@code walden_cursor_lag_seconds}; never a false 0.
 */
@Timeout(60)
class Format1CursorLagTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;
    private final HttpClient http = ContractCheckedClient.create();

    @Test
    void aCursorOnARecordWithoutATimeShowsItsLagInTimeAsUnknown() throws Exception {
        Path log = copyOfFormat1Sample(dir.resolve("log"));
        try (WaldenServer server = new WaldenServer(ServerConfig.load(null, Map.of("data-dir", log.toString(),
                "http", "127.0.0.1:0", "replication-listen", "none", "segment-size", "64KiB"))).start()) {
            String base = "http://127.0.0.1:" + server.boundAddress().getPort();
            server.wal().append("format 2".getBytes(StandardCharsets.UTF_8), Durability.LOCAL);

            JsonNode cursor = JSON.readTree(get(base + "/v1/cursors")).get("cursors").get(0);
            assertThat(cursor.get("name").asText()).isEqualTo("reader");
            assertThat(cursor.get("lag_bytes").asLong()).isPositive();
            assertThat(cursor.get("lag_seconds").isNull()).as("unknown, not 0: " + cursor).isTrue();
            JsonNode listed = JSON.readTree(get(base + "/admin/status")).get("cursors").get(0);
            assertThat(listed.get("lag_seconds").isNull()).as(listed.toString()).isTrue();
            assertThat(get(base + "/metrics").lines().filter(l -> l.startsWith("walden_cursor_lag_seconds{")))
                    .singleElement().satisfies(l -> assertThat(l).contains("cursor=\"reader\"").endsWith(" NaN"));
        }
    }

    private String get(String uri) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(uri)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(uri + ": " + r.body()).isEqualTo(200);
        return r.body();
    }

    /** wal-core's checked-in format-1 log (on the class path from its test jar, or its test classes in a reactor build). */
    private static Path copyOfFormat1Sample(Path to) throws Exception {
        URI sample = Format1CursorLagTest.class.getResource("/format-1/log").toURI();
        Files.createDirectories(to);
        try (FileSystem jar = sample.getScheme().equals("jar") ? FileSystems.newFileSystem(sample, Map.of()) : null;
             Stream<Path> files = Files.list(Path.of(sample))) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.copy(f, to.resolve(f.getFileName().toString()));
            }
        }
        return to;
    }
}
