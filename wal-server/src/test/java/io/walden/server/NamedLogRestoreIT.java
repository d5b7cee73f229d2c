package io.walden.server;

import io.walden.core.Durability;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.WalReader;
import io.walden.core.WalRecord;
import io.walden.core.WalStore;
import io.walden.core.WalStoreConfig;
import io.walden.core.archive.ArchiveConfig;
import io.walden.core.archive.FileArchiveTarget;
import io.walden.server.config.LogArchives;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Archive and restore per log, with a directory archive: the log {@code default} archives at the location as it always
 * did, a named log under {@code logs/<name>/} there (through {@link LogArchives#archiveConfig}, the function the server
 * calls), and {@code walden restore} brings back one log or all of them, the named ones as logs of the store. One
 * archive for the class, made in-process (~1 s); each test is one or two jar runs (~0.7 s each).
 */
class NamedLogRestoreIT {
    private static final long SEGMENT = 64 << 10;
    private static final int ROOT_RECORDS = 2000;
    private static final int ORDERS = 1500;
    private static final int AUDIT = 30;

    @TempDir
    static Path work;
    private static Path archive;
    private static String uri;

    @BeforeAll
    static void archiveARootLogAndTwoNamedLogs() throws Exception {
        archive = work.resolve("archive");
        uri = archive.toUri().toString();
        Path data = work.resolve("data");
        try (FileArchiveTarget target = new FileArchiveTarget(archive)) {
            ArchiveConfig root = ArchiveConfig.builder(target).timeout(Duration.ofMillis(50)).build();
            try (Wal rootLog = Wal.open(WalConfig.builder(data).segmentSize(SEGMENT).archive(root).build());
                 WalStore store = WalStore.open(WalStoreConfig.builder(data).defaults(b -> b.segmentSize(SEGMENT))
                         .logSettings((name, b) -> b.archive(LogArchives.archiveConfig(root, name))).build())) {
                Wal orders = store.create("orders");
                Wal audit = store.create("audit");
                for (int i = 0; i < ROOT_RECORDS; i++) {
                    rootLog.append(("root " + i).getBytes(), Durability.OFF);
                }
                for (int i = 0; i < ORDERS; i++) {
                    orders.append(("order " + i).getBytes(), Durability.OFF);
                }
                for (int i = 0; i < AUDIT; i++) {
                    audit.append(("audit " + i).getBytes(), Durability.LOCAL);
                }
                for (Wal w : List.of(rootLog, orders, audit)) {
                    w.flush();
                    assertThat(w.status().archiver().orElseThrow().awaitArchived(w.flushedLsn(), Duration.ofSeconds(30))).isTrue();
                }
            }
        }
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
