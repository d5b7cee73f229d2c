package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Epoch;
import io.walden.core.EpochHistory;
import io.walden.core.Lsn;
import io.walden.core.archive.ArchiveNames;
import io.walden.core.archive.ArchiveTarget;
import io.walden.core.archive.ArchiveTargets;
import io.walden.core.archive.S3Server;
import io.walden.core.internal.segment.SegmentFiles;
import io.walden.server.contract.ContractCheckedClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Continuous archiving with the real jar against a real S3 API server (S3Proxy in this JVM, AWS signatures checked):
 * a kill -9 under load loses nothing from the archive, a restore brings back every acknowledged record, and a store
 * that refuses requests blocks appends only at the cap.
 */
@Timeout(300)
class ArchiveIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SEGMENT = Long.toString(64 << 10);

    @TempDir
    static Path storeDir;
    static S3Server s3;

    @TempDir
    Path work;

    @BeforeAll
    static void startStore() throws Exception {
        S3Server.useDefaultChains(); // for the ArchiveTargets this test opens itself
        s3 = new S3Server(storeDir);
    }

    @AfterAll
    static void stopStore() throws Exception {
        s3.close();
    }

    /** The AWS SDK's default chain, as environment variables of the jar processes. */
    private static Map<String, String> awsEnv() {
        return Map.of("AWS_ACCESS_KEY_ID", S3Server.ACCESS_KEY, "AWS_SECRET_ACCESS_KEY", S3Server.SECRET_KEY,
                "AWS_REGION", "us-east-1");
    }

    private static List<String> launcher() {
        List<String> l = new ArrayList<>(List.of("env"));
        awsEnv().forEach((k, v) -> l.add(k + "=" + v));
        return l;
    }

    private ServerProcess server(Path dataDir, int port, String... extra) throws Exception {
        return ServerProcess.startUnder(launcher(), work, dataDir, port, "http",
                ContractCheckedClient.wrap(HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()), extra);
    }

    private static JsonNode archiveStatus(ServerProcess server) throws Exception {
        return JSON.readTree(server.get("/admin/status").body()).get("archive");
    }

    private static JsonNode status(ServerProcess server) throws Exception {
        return JSON.readTree(server.get("/admin/status").body());
    }

    @Test
    void aKilledServerArchivesEverySealedSegmentExactlyAndARestoreBringsBackEveryAcknowledgedRecord() throws Exception {
        String uri = s3.uri("kill");
        Path data = work.resolve("data");
        int port = ServerProcess.freePort();
        String[] args = {"--segment-size", SEGMENT, "--archive-to", uri, "--archive-endpoint", s3.endpoint(),
                "--archive-timeout", "500ms"};
        Map<Long, String> acked = new ConcurrentHashMap<>();
        try (ServerProcess primary = server(data, port, args)) {
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> writers = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                int writer = w;
                Thread t = new Thread(() -> {
                    for (int i = 0; !stop.get(); i++) {
                        String payload = "w" + writer + "-" + i + "-" + "x".repeat(200 + (i % 7) * 100);
                        try {
                            HttpResponse<String> r = primary.post("/v1/records", payload.getBytes(StandardCharsets.UTF_8));
                            if (r.statusCode() == 200 || r.statusCode() == 201) {
                                acked.put(Lsn.parse(JSON.readTree(r.body()).get("lsn").asText()), payload);
                            }
                        } catch (Exception e) {
                            return; // the server was killed
                        }
                    }
                });
                t.start();
                writers.add(t);
            }
            waitUntil(60, () -> archiveStatus(primary).get("archived_segments").asLong() >= 8);
            primary.kill(); // under load, with uploads in flight
            stop.set(true);
            for (Thread t : writers) {
                t.join();
            }
        }
        assertThat(acked).hasSizeGreaterThan(100);
        try (ServerProcess restarted = server(data, port, args)) {
            waitUntil(60, () -> {
                JsonNode s = status(restarted);
                JsonNode a = s.get("archive");
                return a.get("pending_segments").asInt() == 0
                        && Lsn.parse(a.get("archived_lsn").asText()) >= Lsn.parse(s.get("flushed_lsn").asText());
            });
            assertThat(archiveStatus(restarted).get("target").asText()).isEqualTo(uri);
            try (ArchiveTarget archive = ArchiveTargets.open(uri, s3.endpoint()); Stream<Path> files = Files.list(data)) {
                long flushed = Lsn.parse(status(restarted).get("flushed_lsn").asText());
                List<Epoch> epochs = new ArrayList<>();
                status(restarted).get("history").forEach(e -> epochs.add(new Epoch(e.get("epoch").asInt(),
                        Lsn.parse(e.get("start_lsn").asText()))));
                EpochHistory history = EpochHistory.of(epochs); // the kill began epoch 2
                int compared = 0;
                for (Path segment : files.filter(p -> SegmentFiles.parseName(p.getFileName().toString()) >= 0).sorted().toList()) {
                    long start = SegmentFiles.parseName(segment.getFileName().toString());
                    if (start + (64 << 10) > flushed) {
                        continue; // the current segment: not sealed
                    }
                    Path copy = work.resolve("copy");
                    String object = ArchiveNames.segment(history.at(start + (64 << 10)).number(), start);
                    assertThat(archive.get(object, copy)).as(object).isTrue();
                    assertThat(Files.readAllBytes(copy)).as(segment.toString()).isEqualTo(Files.readAllBytes(segment));
                    compared++;
                }
                assertThat(compared).isGreaterThanOrEqualTo(8);
            }
            restarted.terminate();
        }

        deleteRecursively(data);
        Path restored = work.resolve("restored");
        WaldenJar.Run run = WaldenJar.run(work, awsEnv(), "restore", "--from", uri, "--data-dir", restored.toString(),
                "--archive-endpoint", s3.endpoint());
        assertThat(run.exitCode()).as(run.stdout() + run.stderr()).isZero();
        assertThat(run.stdout()).contains("restored");
        assertThat(run.stderr()).contains("restore: segment 1/"); // progress lines when not on a terminal
        try (ServerProcess fromArchive = ServerProcess.start(work, restored, ServerProcess.freePort())) {
            Map<Long, String> back = fromArchive.records();
            for (Map.Entry<Long, String> e : acked.entrySet()) {
                assertThat(back.get(e.getKey())).as("acknowledged record at " + Lsn.format(e.getKey())).isEqualTo(e.getValue());
            }
        }
    }

    @Test
    void aRefusingStoreBlocksAppendsOnlyAtTheCapAndAppendsResumeWhenItReturns() throws Exception {
        String uri = s3.uri("down");
        int port = ServerProcess.freePort();
        long cap = 4 * (64 << 10);
        try (ServerProcess primary = server(work.resolve("data"), port, "--segment-size", SEGMENT, "--archive-to", uri,
                "--archive-endpoint", s3.endpoint(), "--archive-timeout", "0", "--archive-max-pending-bytes", Long.toString(cap),
                "--durability", "local")) {
            byte[] payload = "y".repeat(4000).getBytes(StandardCharsets.UTF_8);
            s3.stop();
            try {
                long accepted = 0;
                HttpResponse<String> refused = null;
                long deadline = System.nanoTime() + 60_000_000_000L;
                while (refused == null && System.nanoTime() < deadline) {
                    HttpResponse<String> r = primary.post("/v1/records", payload);
                    if (r.statusCode() == 503) {
                        refused = r;
                    } else {
                        assertThat(r.statusCode()).as(r.body()).isBetween(200, 201);
                        accepted++;
                    }
                }
                assertThat(refused).isNotNull();
                assertThat(JSON.readTree(refused.body()).get("error").asText()).isEqualTo("appends_blocked");
                assertThat(JSON.readTree(refused.body()).get("detail").asText()).contains(uri).contains("behind");
                assertThat(accepted * payload.length).as("appends go on until the cap").isGreaterThan(cap - 2 * (64 << 10));
                JsonNode a = archiveStatus(primary);
                assertThat(a.get("blocking_appends").asBoolean()).isTrue();
                assertThat(a.get("last_error").isNull()).isFalse();
                assertThat(a.get("pending_segments").asInt()).isPositive();
                assertThat(primary.get("/metrics").body()).contains("walden_archive_failures_total");
            } finally {
                s3.start();
            }
            waitUntil(90, () -> primary.post("/v1/records", payload).statusCode() == 200
                    || primary.post("/v1/records", payload).statusCode() == 201);
            waitUntil(60, () -> archiveStatus(primary).get("pending_segments").asInt() == 0);
            JsonNode a = archiveStatus(primary);
            assertThat(a.get("blocking_appends").asBoolean()).isFalse();
            assertThat(a.get("last_error").isNull()).isTrue();
            assertThat(primary.get("/metrics").body()).contains("walden_archive_segments_total")
                    .contains("walden_archive_lag_bytes");
        }
    }

    /**
     * Every log of a replica far behind its primary catches up from the archive, each from where the primary archives
     * it: {@code default} (removed by a checkpoint) at the archive's location, the named log {@code orders} (removed by
     * its retention) under {@code logs/orders/}; then both stream.
     */
    @Test
    void aReplicaFarBehindATruncatedPrimaryCatchesUpEveryLogFromTheArchiveAndThenStreams() throws Exception {
        String uri = s3.uri("replica");
        int replication = ServerProcess.freePort();
        int replicaPort = ServerProcess.freePort();
        String[] replicaArgs = {"--replicate-from", "127.0.0.1:" + replication, "--name", "r1", "--restore-from", uri,
                "--archive-endpoint", s3.endpoint()};
        Map<Long, String> acked = new TreeMap<>();
        TreeMap<Long, String> orders = new TreeMap<>();
        try (ServerProcess primary = server(work.resolve("primary"), ServerProcess.freePort(), "--segment-size", SEGMENT,
                "--archive-to", uri, "--archive-endpoint", s3.endpoint(), "--archive-timeout", "0", "--durability", "local",
                "--replication-listen", "127.0.0.1:" + replication, "--max-slot-retained-bytes", "200000")) {
            HttpResponse<String> created = primary.post("/v1/logs",
                    "{\"name\":\"orders\",\"settings\":{\"retention-bytes\":\"200000\"}}".getBytes(StandardCharsets.UTF_8));
            assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
            try (ServerProcess replica = server(work.resolve("replica"), replicaPort, replicaArgs)) {
                append(primary, acked, "/v1/records", "a", 50);
                append(primary, orders, ORDERS, "a", 50);
                waitUntil(60, () -> status(replica).get("flushed_lsn").asText().equals(status(primary).get("flushed_lsn").asText())
                        && flushedLsn(replica, "orders").equals(flushedLsn(primary, "orders")));
                replica.terminate();
            }
            append(primary, acked, "/v1/records", "b", 700); // about ten segments the stopped replica misses, in each log
            append(primary, orders, ORDERS, "b", 700);
            long flushed = Lsn.parse(status(primary).get("flushed_lsn").asText());
            waitUntil(60, () -> archiveStatus(primary).get("pending_segments").asInt() == 0
                    && logArchive(primary, "orders").get("pending_segments").asInt() == 0);
            HttpResponse<String> truncated = primary.post("/admin/checkpoint?lsn=" + Lsn.format(flushed), new byte[0]);
            assertThat(truncated.statusCode()).as(truncated.body()).isEqualTo(200);
            long oldest = Lsn.parse(status(primary).get("oldest_lsn").asText());
            assertThat(oldest).as("the primary removed what the replica needs").isGreaterThan(acked.keySet().iterator().next() + 8 * (64 << 10));
            waitUntil(30, () -> Lsn.parse(describe(primary, "orders").get("oldest_lsn").asText())
                    > orders.keySet().iterator().next() + 6 * (64 << 10)); // orders' retention removed what it needs

            try (ServerProcess replica = server(work.resolve("replica"), replicaPort, replicaArgs)) {
                append(primary, acked, "/v1/records", "c", 20); // streamed once the archive brought the replica up to the primary
                append(primary, orders, ORDERS, "c", 20);
                waitUntil(90, () -> status(replica).get("flushed_lsn").asText().equals(status(primary).get("flushed_lsn").asText())
                        && flushedLsn(replica, "orders").equals(flushedLsn(primary, "orders")));
                JsonNode s = status(replica);
                assertThat(s.get("archive_bytes_fetched").asLong()).as("both logs' archived segments")
                        .isGreaterThan(2 * 6 * (64 << 10));
                assertThat(s.get("replication_error").isNull()).as(s.toString()).isTrue();
                assertHolds(replica.records(), acked);
                // The replica runs orders' retention too (its primary's settings): it keeps at least what the primary keeps.
                long primaryOldest = Lsn.parse(describe(primary, "orders").get("oldest_lsn").asText());
                Map<Long, String> onReplica = replica.records(ORDERS);
                assertHolds(onReplica, orders.tailMap(primaryOldest, true));
                assertThat(orders).as("nothing but acknowledged records").containsAllEntriesOf(onReplica);
            }
        }
    }

    private static final String ORDERS = "/v1/logs/orders/records";

    private static void assertHolds(Map<Long, String> onReplica, Map<Long, String> acked) {
        for (Map.Entry<Long, String> e : acked.entrySet()) {
            assertThat(onReplica.get(e.getKey())).as("record at " + Lsn.format(e.getKey())).isEqualTo(e.getValue());
        }
    }

    private static JsonNode describe(ServerProcess server, String log) throws Exception {
        return JSON.readTree(server.get("/v1/logs/" + log).body());
    }

    private static String flushedLsn(ServerProcess server, String log) throws Exception {
        JsonNode d = describe(server, log);
        return d.has("flushed_lsn") ? d.get("flushed_lsn").asText() : "none";
    }

    private static JsonNode logArchive(ServerProcess server, String log) throws Exception {
        return describe(server, log).get("archive");
    }

    /**
     * The store is down; the primary cannot upload, and its replica runs retention far smaller than what the primary
     * holds. The primary dies, the replica is promoted, the store comes back: the archive has every acknowledged record,
     * because the replica kept every segment its primary had not reported archived (docs/replication.md, "Retention and
     * the archive").
     */
    @Test
    void aReplicaPromotedAfterItsPrimaryDiedDuringAStoreOutageArchivesWhatItsPrimaryCouldNot() throws Exception {
        String uri = s3.uri("outage");
        int replication = ServerProcess.freePort();
        Map<Long, String> acked = new TreeMap<>();
        try (ServerProcess primary = server(work.resolve("primary"), ServerProcess.freePort(), "--segment-size", SEGMENT,
                "--archive-to", uri, "--archive-endpoint", s3.endpoint(), "--archive-timeout", "0", "--durability", "local",
                "--replication-listen", "127.0.0.1:" + replication);
             ServerProcess replica = server(work.resolve("replica"), ServerProcess.freePort(), "--replicate-from",
                     "127.0.0.1:" + replication, "--name", "r1", "--archive-to", uri, "--archive-endpoint", s3.endpoint(),
                     "--archive-timeout", "500ms", "--retention-bytes", "192KiB")) {
            append(primary, acked, "before", 100);
            waitUntil(60, () -> archiveStatus(primary).get("archived_segments").asLong() >= 1);
            s3.stop();
            try {
                append(primary, acked, "outage", 1300); // about 20 segments of 64 KiB the store does not get
                String end = status(primary).get("flushed_lsn").asText();
                waitUntil(60, () -> status(replica).get("flushed_lsn").asText().equals(end));
                waitUntil(60, () -> status(replica).get("retention").get("held_by").toString().contains("archive"));
                // What reached the store before it went down (read now: an upload may have been in flight at the stop).
                long firstUnarchived = Lsn.parse(archiveStatus(primary).get("archived_lsn").asText());
                assertThat(Lsn.parse(status(replica).get("oldest_lsn").asText())).as("the replica kept what the archive lacks")
                        .isLessThanOrEqualTo(firstUnarchived);
                primary.kill();
                HttpResponse<String> promoted = replica.post("/admin/promote", new byte[0]);
                assertThat(promoted.statusCode()).as(promoted.body()).isEqualTo(200);
            } finally {
                s3.start();
            }
            append(replica, acked, "promoted", 10);
            waitUntil(120, () -> {
                JsonNode a = archiveStatus(replica);
                return a.get("pending_segments").asInt() == 0
                        && Lsn.parse(a.get("archived_lsn").asText()) >= Lsn.parse(status(replica).get("flushed_lsn").asText());
            });
            assertThat(archiveStatus(replica).get("missing").isNull()).isTrue();
            replica.terminate();
        }
        Path restored = work.resolve("restored");
        WaldenJar.Run run = WaldenJar.run(work, awsEnv(), "restore", "--from", uri, "--data-dir", restored.toString(),
                "--archive-endpoint", s3.endpoint());
        assertThat(run.exitCode()).as(run.stdout() + run.stderr()).isZero();
        try (ServerProcess fromArchive = ServerProcess.start(work, restored, ServerProcess.freePort())) {
            Map<Long, String> back = fromArchive.records();
            for (Map.Entry<Long, String> e : acked.entrySet()) {
                assertThat(back.get(e.getKey())).as("acknowledged record at " + Lsn.format(e.getKey())).isEqualTo(e.getValue());
            }
        }
    }

    private static void append(ServerProcess server, Map<Long, String> acked, String prefix, int n) throws Exception {
        append(server, acked, "/v1/records", prefix, n);
    }

    private static void append(ServerProcess server, Map<Long, String> acked, String path, String prefix, int n)
            throws Exception {
        for (int i = 0; i < n; i++) {
            String payload = prefix + "-" + i + "-" + "z".repeat(900);
            HttpResponse<String> r = server.post(path, payload.getBytes(StandardCharsets.UTF_8));
            assertThat(r.statusCode()).as(r.body()).isBetween(200, 201);
            acked.put(Lsn.parse(JSON.readTree(r.body()).get("lsn").asText()), payload);
        }
    }

    static void deleteRecursively(Path dir) throws Exception {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
