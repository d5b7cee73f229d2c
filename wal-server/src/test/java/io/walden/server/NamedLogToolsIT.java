package io.walden.server;

import io.walden.core.Durability;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.WalStore;
import io.walden.core.WalStoreConfig;
import io.walden.core.internal.segment.SegmentFiles;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The offline tools on a data directory that holds, as a server's does, the log {@code default} at its root and a
 * {@link WalStore} beside it (named logs in {@code logs/}, its journal in {@code journal/}, its lock file), both made by
 * wal-core here and open at the same time. One directory for the class, read by every test (a test that damages a log
 * damages a copy). Each test is one or two runs of the jar (~0.7 s each).
 */
class NamedLogToolsIT {
    private static final long SEGMENT = 64 << 10;
    private static final int ROOT_RECORDS = 300;
    private static final int ORDERS = 120;
    private static final int AUDIT = 40;

    @TempDir
    static Path work;
    private static Path data;
    private static final List<Long> audit = new ArrayList<>();

    @BeforeAll
    static void writeARootLogAndAStoreBesideIt() {
        data = work.resolve("data");
        try (Wal root = Wal.open(WalConfig.builder(data).segmentSize(SEGMENT).build());
             WalStore store = WalStore.open(WalStoreConfig.builder(data).defaults(b -> b.segmentSize(SEGMENT)).build())) {
            Wal orders = store.create("orders");
            Wal auditLog = store.create("audit");
            for (int i = 0; i < ROOT_RECORDS; i++) {
                root.append(("root " + i).getBytes(), Durability.OFF);
            }
            for (int i = 0; i < ORDERS; i++) {
                orders.append(("order " + i).getBytes(), Durability.LOCAL); // through the store's journal
            }
            for (int i = 0; i < AUDIT; i++) {
                audit.add(auditLog.append(("audit " + i).getBytes(), Durability.LOCAL));
            }
        }
        assertThat(data.resolve("logs")).isDirectory();
        assertThat(data.resolve("journal")).isDirectory();
        assertThat(data.resolve("walden-store.lock")).exists();
    }

    @Test
    void dumpWithoutALogReadsTheRootLogAloneWhateverTheStoreKeepsBesideIt() throws Exception {
        WaldenJar.Run run = WaldenJar.run(work, "dump", "--data-dir", data.toString());
        assertThat(run.exitCode()).as(run.stderr()).isZero();
        assertThat(run.stdout().lines()).hasSize(ROOT_RECORDS);
    }

    @Test
    void dumpWithALogReadsThatNamedLog() throws Exception {
        WaldenJar.Run run = WaldenJar.run(work, "dump", "--data-dir", data.toString(), "--log", "orders", "--stats");
        assertThat(run.exitCode()).as(run.stderr()).isZero();
        assertThat(run.stdout()).containsPattern("(?m)^Total\\s+" + ORDERS + " \\(100\\.00\\)");
    }

    @Test
    void dumpOfALogTheDirectoryDoesNotHoldIsOneLineNamingTheLogsItHolds() throws Exception {
        WaldenJar.assertOneLineUserError(WaldenJar.run(work, "dump", "--data-dir", data.toString(), "--log", "invoices"),
                "--log invoices: no such log in " + data + " (its named logs: audit, orders)");
    }

    @Test
    void verifyChecksEveryLogAndTheJournalEachUnderItsName() throws Exception {
        WaldenJar.Run run = WaldenJar.run(work, "verify", "--data-dir", data.toString());
        assertThat(run.exitCode()).as(run.stdout() + run.stderr()).isZero();
        assertThat(run.stdout()).contains("default: log ").contains(ROOT_RECORDS + " records").contains("default: clean")
                .contains("orders: clean").contains(ORDERS + " records").contains("audit: clean")
                .contains("journal (the store's): clean").contains("all 4 logs clean");
    }

    @Test
    void verifyFailsWhenOneNamedLogHasAProblemAndNamesIt() throws Exception {
        Path copy = work.resolve("damaged");
        copyTree(data, copy);
        long bad = audit.get(AUDIT / 2);
        Path auditDir = copy.resolve("logs").resolve("audit");
        try (FileChannel ch = FileChannel.open(auditDir.resolve(SegmentFiles.name(bad & -SEGMENT)), StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, (bad & (SEGMENT - 1)) + 26); // a payload byte: its CRC-32C no longer matches
            b.put(0, (byte) (b.get(0) ^ 1)).rewind();
            ch.write(b, (bad & (SEGMENT - 1)) + 26);
        }
        WaldenJar.Run run = WaldenJar.run(work, "verify", "--data-dir", copy.toString());
        assertThat(run.exitCode()).as(run.stdout() + run.stderr()).isEqualTo(1);
        assertThat(run.stdout()).contains("default: clean").contains("orders: clean")
                .contains("audit: PROBLEM at " + io.walden.core.Lsn.format(bad)).contains("CRC-32C mismatch")
                .contains("1 of 4 logs with a problem: audit");
    }

    private static void copyTree(Path from, Path to) throws Exception {
        try (Stream<Path> all = Files.walk(from)) {
            for (Path p : all.toList()) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target);
                }
            }
        }
    }
}
