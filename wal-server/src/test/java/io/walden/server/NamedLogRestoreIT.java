package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Durability;
import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.WalReader;
import io.walden.core.WalRecord;
import io.walden.core.WalStore;
import io.walden.core.WalStoreConfig;
import io.walden.core.archive.ArchiveNames;
import io.walden.server.config.LogArchives;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Archive and restore per log, with a directory archive: a server with {@code --archive-to} archives the log
 * {@code default} at the location as it always did and each named log under {@code logs/<name>/} there
 * ({@link LogArchives}), and {@code walden restore} brings back one log or all of them, the named ones as logs of the
 * store. One archive for the class, made by a server process (~4 s with its start and stop); each test is one or two jar
 * runs (~0.7 s each).
 */
class NamedLogRestoreIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long SEGMENT = 64 << 10;
    private static final int ROOT_RECORDS = 2000;
    private static final int ORDERS = 1500;
    private static final int AUDIT = 30;

    @TempDir
    static Path work;
    private static Path archive;
    private static String uri;

    @BeforeAll
    static void aServerArchivesItsDefaultLogAndTwoNamedLogs() throws Exception {
        archive = work.resolve("archive");
        uri = archive.toUri().toString();
        try (ServerProcess server = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort(),
                "--archive-to", uri, "--archive-timeout", "100ms", "--segment-size", "64KiB")) {
            for (String log : List.of("orders", "audit")) {
                HttpResponse<String> created = server.send("POST", "/v1/logs", "{\"name\": \"" + log + "\"}");
                assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
            }
            append(server, "/v1/records/batch", "root", ROOT_RECORDS);
            append(server, "/v1/logs/orders/records/batch", "order", ORDERS);
            append(server, "/v1/logs/audit/records/batch", "audit", AUDIT);
            for (String log : List.of("default", "orders", "audit")) {
                long flushed = Lsn.parse(JSON.readTree(server.get("/v1/logs/" + log).body()).get("flushed_lsn").asText());
                Path objects = log.equals("default") ? archive : archive.resolve("logs").resolve(log);
                waitUntil(() -> archivedUpTo(objects) >= flushed);
                // and the log's description says so: its own archive's progress, not the log default's
                waitUntil(() -> Lsn.parse(JSON.readTree(server.get("/v1/logs/" + log).body())
                        .at("/archive/archived_lsn").asText("0/0")) >= flushed);
            }
            JsonNode status = JSON.readTree(server.get("/admin/status").body());
            for (JsonNode summary : status.get("logs")) {
                assertThat(summary.at("/archive/failures").asLong(-1)).as("the status shows every log's archive: %s", summary)
                        .isZero();
            }
            server.terminate(); // a clean stop: the named logs close before the archive's client
        }
    }

    /** Appends {@code n} records {@code "<prefix> <i>"} in batches of 500 (the batch framing: a length, then the bytes). */
    private static void append(ServerProcess server, String path, String prefix, int n) throws Exception {
        for (int from = 0; from < n; from += 500) {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            for (int i = from; i < Math.min(n, from + 500); i++) {
                byte[] payload = (prefix + " " + i).getBytes(StandardCharsets.UTF_8);
                body.write(ByteBuffer.allocate(4).putInt(payload.length).array());
                body.write(payload);
            }
            HttpResponse<String> r = server.post(path + "?durability=local", body.toByteArray());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        }
    }

    /** How far the objects in {@code dir} hold the log: the end of its furthest segment or partial upload. */
    private static long archivedUpTo(Path dir) throws Exception {
        long end = 0;
        if (Files.isDirectory(dir)) {
            for (String name : list(dir)) {
                ArchiveNames.Parsed p = ArchiveNames.parse(name);
                if (p != null) {
                    end = Math.max(end, p.start() + (p.partial() ? Files.size(dir.resolve(name)) : SEGMENT));
                }
            }
        }
        return end;
    }

    @Test
    void eachNamedLogArchivesUnderItsOwnPrefixBesideTheDefaultLogs() throws Exception {
        assertThat(list(archive)).isNotEmpty().allMatch(n -> n.matches("[0-9A-F]{24}\\.wal(\\.partial)?|[0-9A-F]{8}\\.history|logs"));
        assertThat(list(archive.resolve("logs"))).containsExactly("audit", "orders");
        assertThat(list(archive.resolve("logs/orders"))).anyMatch(n -> n.endsWith(".wal"));
        assertThat(list(archive.resolve("logs/audit"))).anyMatch(n -> n.endsWith(".wal.partial"));
    }

    @Test
    void restoreWithoutALogBringsBackTheDefaultLogAndEveryNamedLog() throws Exception {
        Path into = work.resolve("all");
        WaldenJar.Run run = WaldenJar.run(work, "restore", "--from", uri, "--data-dir", into.toString());
        assertThat(run.exitCode()).as(run.stdout() + run.stderr()).isZero();
        assertThat(run.stdout()).contains("orders: restored").contains("audit: restored");
        assertThat(records(into)).hasSize(ROOT_RECORDS).startsWith("root 0").endsWith("root " + (ROOT_RECORDS - 1));
        try (WalStore store = WalStore.open(WalStoreConfig.builder(into).build())) {
            assertThat(store.names()).containsExactly("audit", "orders");
            assertThat(records(store.log("orders").orElseThrow())).hasSize(ORDERS).endsWith("order " + (ORDERS - 1));
            assertThat(records(store.log("audit").orElseThrow())).hasSize(AUDIT).endsWith("audit " + (AUDIT - 1));
        }
    }

    @Test
    void restoreOfOneNamedLogAddsItToADataDirectoryAsALogOfTheStore() throws Exception {
        Path into = work.resolve("one");
        try (Wal other = Wal.open(WalConfig.builder(into).segmentSize(SEGMENT).build())) {
            other.append("the server's own".getBytes(), Durability.LOCAL);
        }
        WaldenJar.Run run = WaldenJar.run(work, "restore", "--from", uri, "--data-dir", into.toString(), "--log", "orders");
        assertThat(run.exitCode()).as(run.stdout() + run.stderr()).isZero();
        assertThat(records(into)).containsExactly("the server's own");
        try (WalStore store = WalStore.open(WalStoreConfig.builder(into).build())) {
            assertThat(store.names()).containsExactly("orders");
            assertThat(records(store.log("orders").orElseThrow())).hasSize(ORDERS).startsWith("order 0");
        }
        WaldenJar.assertOneLineUserError(WaldenJar.run(work, "restore", "--from", uri, "--data-dir", into.toString(),
                "--log", "orders"), "refusing to restore log orders into " + into.resolve("logs/orders") + ": it exists");
    }

    @Test
    void aNamedLogIsNotRestoredWhileAStoreHoldsTheDirectory() throws Exception {
        Path into = work.resolve("held");
        try (WalStore held = WalStore.open(WalStoreConfig.builder(into).build())) {
            WaldenJar.assertOneLineUserError(WaldenJar.run(work, "restore", "--from", uri, "--data-dir", into.toString(),
                    "--log", "audit"), "a server holds its named logs (walden-store.lock)");
            assertThat(held.names()).isEmpty();
        }
        assertThat(list(into.resolve("logs"))).isEmpty();
    }

    @Test
    void anLsnLimitNamesOneLogSoItNeedsTheLogFlagWhenNamedLogsAreArchived() throws Exception {
        WaldenJar.assertOneLineUserError(WaldenJar.run(work, "restore", "--from", uri, "--data-dir",
                work.resolve("until").toString(), "--until", "0/1000"), "--until is an LSN of one log");
    }

    private static List<String> list(Path dir) throws Exception {
        try (var entries = Files.list(dir)) {
            return entries.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    /** The payloads of the log at {@code dir}'s root, opened as the server opens it. */
    private static List<String> records(Path dir) {
        try (Wal wal = Wal.open(WalConfig.builder(dir).segmentSize(SEGMENT).build())) {
            return records(wal);
        }
    }

    private static List<String> records(Wal wal) {
        List<String> out = new ArrayList<>();
        try (WalReader r = wal.reader(wal.oldestLsn())) {
            for (WalRecord rec; (rec = r.next()) != null; ) {
                out.add(new String(rec.payload()));
            }
        }
        return out;
    }
}
