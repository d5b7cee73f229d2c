package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Lsn;
import io.walden.core.TestLogs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Record times and retention against walden.jar processes: {@code tail --from-time}, {@code restore --until-time},
 * and a server fed ten times its {@code --retention-bytes} that stays within it, with a cursor holding it back.
 */
@Timeout(value = 180, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class TimeAndRetentionIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long SEGMENT = 64 << 10;
    private static final long LIMIT = 4 * SEGMENT;

    @TempDir
    Path work;

    private WaldenJar.Run walden(ServerProcess server, String... args) throws Exception {
        return WaldenJar.run(work, Map.of("WALDEN_URL", server.uri("").toString()), null, args);
    }

    /** Posts {@code n} records "prefix-i" plus filler, as batches of 50; returns their payloads in order. */
    private static List<String> feed(ServerProcess server, String prefix, int n, int filler) throws Exception {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i += 50) {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream batch = new DataOutputStream(bytes);
            for (int j = i; j < Math.min(n, i + 50); j++) {
                String p = prefix + "-" + j + "-" + "f".repeat(filler);
                byte[] b = p.getBytes(StandardCharsets.UTF_8);
                batch.writeInt(b.length);
                batch.write(b);
                out.add(p);
            }
            HttpResponse<String> r = server.post("/v1/records/batch?durability=local", bytes.toByteArray(),
                    "Content-Type", "application/octet-stream");
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        }
        return out;
    }

    /** The segments the log spans in {@code status}, from oldest_lsn's to insert_lsn's (both counted). */
    private static long segmentsFromOldestToInsert(JsonNode status) {
        long oldest = Lsn.parse(status.get("oldest_lsn").asText());
        long insert = Lsn.parse(status.get("insert_lsn").asText());
        return insert / SEGMENT - oldest / SEGMENT + 1;
    }

    private static JsonNode status(ServerProcess server) throws Exception {
        return JSON.readTree(server.get("/admin/status").body());
    }

    private static long segmentFilesSize(Path dir) throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".wal")).mapToLong(f -> f.toFile().length()).sum();
        }
    }

    @Test
    void tailFromATimePrintsOnlyTheRecordsAppendedSince() throws Exception {
        try (ServerProcess server = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort())) {
            feed(server, "before", 120, 10);
            Instant since = TestLogs.timeBetweenAppends();
            List<String> after = feed(server, "after", 30, 10);

            WaldenJar.Run tailed = walden(server, "tail", "--from-time", since.toString());
            assertThat(tailed.exitCode()).as(tailed.stderr()).isZero();
            assertThat(tailed.stdout().lines().toList()).isEqualTo(after);
            WaldenJar.Run json = walden(server, "tail", "--from-time", since.toString(), "--format", "json");
            Instant first = Instant.parse(JSON.readTree(json.stdout().lines().findFirst().orElseThrow()).get("time").asText());
            assertThat(first).isAfterOrEqualTo(since);
        }
    }

    /** An archive of records "early" (several segments), then a time, then records "late" (many more segments). */
    private record Archived(Path archive, List<String> early, Instant cut) {
    }

    private Archived archiveAcrossATime(int late) throws Exception {
        Path archive = work.resolve("archive");
        Files.createDirectories(archive);
        List<String> early;
        Instant cut;
        try (ServerProcess server = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort(),
                "--segment-size", "64KiB", "--archive-to", archive.toUri().toString(), "--archive-timeout", "200ms")) {
            early = feed(server, "early", 300, 600); // several segments
            cut = TestLogs.timeBetweenAppends(); // "just before the bad deploy"
            feed(server, "late", late, 600);
            waitUntil(60, () -> {
                JsonNode s = status(server);
                return Lsn.parse(s.get("archive").get("archived_lsn").asText()) >= Lsn.parse(s.get("flushed_lsn").asText());
            });
        }
        return new Archived(archive, early, cut);
    }

    private static long files(Path dir, String suffix) throws Exception {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(suffix)).count();
        }
    }

    @Test
    void restoreUntilATimeStopsAfterTheLastRecordAppendedByThen() throws Exception {
        Archived a = archiveAcrossATime(200);
        Path restored = work.resolve("restored");
        WaldenJar.Run run = WaldenJar.run(work, "restore", "--from", a.archive.toUri().toString(), "--data-dir",
                restored.toString(), "--until-time", a.cut.toString());
        assertThat(run.exitCode()).as(run.stdout() + run.stderr()).isZero();
        try (ServerProcess fromArchive = ServerProcess.start(work, restored, ServerProcess.freePort())) {
            assertThat(new ArrayList<>(fromArchive.records().values())).isEqualTo(a.early);
        }
        WaldenJar.Run dump = WaldenJar.run(work, "dump", "--data-dir", restored.toString());
        assertThat(dump.stdout().lines().filter(l -> !l.contains("padding")).map(l -> Instant.parse(
                l.replaceAll(".*time: ([^,]+),.*", "$1")))).allMatch(t -> !t.isAfter(a.cut));
    }

    @Test
    void restoreUntilATimeDownloadsNothingPastTheFirstSegmentAfterItAndReportsWhatTheRestoredLogHolds() throws Exception {
        Archived a = archiveAcrossATime(900); // late records in three times as many segments as the early ones
        Path restored = work.resolve("restored");
        WaldenJar.Run run = WaldenJar.run(work, "restore", "--from", a.archive.toUri().toString(), "--data-dir",
                restored.toString(), "--until-time", a.cut.toString());
        assertThat(run.exitCode()).as(run.stdout() + run.stderr()).isZero();

        long kept = files(restored, ".wal");
        long downloaded = run.stderr().lines().filter(l -> l.startsWith("restore: segment ")).count();
        assertThat(files(a.archive, ".wal")).as("the archive").isGreaterThan(kept + 5);
        assertThat(downloaded).as(run.stderr()).isBetween(kept, kept + 1);
        assertThat(run.stdout()).as("what the restored log holds")
                .contains("restored " + kept + " segment(s), " + a.early.size() + " records")
                .contains("(" + downloaded + " segment(s) downloaded)");
    }

    @Test
    void aServerFedTenTimesItsRetentionBytesStaysWithinThemAndKeepsEveryRecordFromItsOldest() throws Exception {
        Path data = work.resolve("data");
        try (ServerProcess server = ServerProcess.start(work, data, ServerProcess.freePort(), "--segment-size", "64KiB",
                "--retention-bytes", "256KiB")) {
            List<String> fed = feed(server, "r", 2600, 1000); // 10 x 256 KiB
            waitUntil(30, () -> status(server).get("retention").get("removed_segments").asLong() >= 30);
            // Retention looks again when the feed's last segment switch is seen (within its 100 ms poll): wait for that
            // look, so that reading every record below does not race with one last removal under its pages.
            waitUntil(30, () -> segmentsFromOldestToInsert(status(server)) * SEGMENT <= LIMIT);
            waitUntil(() -> segmentFilesSize(data) <= LIMIT + 3 * SEGMENT); // the last removals reach the directory

            assertThat(segmentFilesSize(data)).as("kept segments, the one prepared ahead and up to two spares")
                    .isLessThanOrEqualTo(LIMIT + 3 * SEGMENT);
            List<String> kept = new ArrayList<>(server.records().values());
            assertThat(kept.size()).isGreaterThan(100);
            assertThat(kept).as("every record from oldest_lsn on, none missing").isEqualTo(fed.subList(fed.size() - kept.size(), fed.size()));
            JsonNode retention = status(server).get("retention");
            assertThat(retention.get("bytes").asLong()).isEqualTo(LIMIT);
            assertThat(retention.get("held_by")).isEmpty();
            assertThat(server.get("/metrics").body()).containsPattern("walden_retention_removed_segments_total\\{[^}]*} [1-9]");
        }
    }

    @Test
    void aCursorHoldsRetentionBackAndStatusAndMetricsNameIt() throws Exception {
        try (ServerProcess server = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort(),
                "--segment-size", "64KiB", "--retention-bytes", "256KiB")) {
            String start = status(server).get("insert_lsn").asText();
            assertThat(server.put("/v1/cursors/slow", "{\"lsn\":\"" + start + "\"}").statusCode()).isEqualTo(200);
            feed(server, "r", 1000, 1000);
            // Retention looks within 100 ms of each new segment and every 5 s: its last look may predate the last records.
            waitUntil(30, () -> {
                JsonNode heldBy = status(server).get("retention").get("held_by");
                return !heldBy.isEmpty() && heldBy.get(0).get("bytes").asLong() > LIMIT;
            });

            JsonNode held = status(server).get("retention").get("held_by").get(0);
            assertThat(held.get("holder").asText()).isEqualTo("cursor");
            assertThat(held.get("from_lsn").asText()).isEqualTo(start);
            assertThat(held.get("bytes").asLong()).isGreaterThan(LIMIT);
            assertThat(Instant.parse(held.get("since").asText())).isBefore(Instant.now());
            assertThat(status(server).get("oldest_lsn").asText()).isEqualTo(start);
            assertThat(server.get("/metrics").body()).containsPattern("walden_retention_held_bytes\\{[^}]*holder=\"cursor\"[^}]*} [1-9]");
        }
    }
}
