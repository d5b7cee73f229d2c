package io.walden.server;

import io.walden.core.Compression;
import io.walden.core.Durability;
import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.internal.segment.SegmentFiles;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The offline tools, run through the real jar against logs written by wal-core. */
class ToolsIT {
    private static final long SEGMENT = 64 << 10;

    @TempDir
    Path work;
    private Path log;
    private final List<Long> lsns = new ArrayList<>();

    @BeforeEach
    void writeALog() {
        log = work.resolve("log");
        try (Wal wal = Wal.open(WalConfig.builder(log).segmentSize(SEGMENT).build())) {
            for (int i = 0; i < 3000; i++) {
                lsns.add(wal.append(i % 3, ("record " + i).getBytes(), Durability.OFF));
            }
        }
    }

    @Test
    void dumpShouldPrintOneLinePerRecordWithItsLinks() throws Exception {
        WaldenJar.Run run = WaldenJar.run(work, "dump", "--data-dir", log.toString());
        assertThat(run.exitCode()).as(run.stderr()).isZero();
        String[] lines = run.stdout().split("\n");
        assertThat(lines).hasSize(3000);
        assertThat(lines[0]).matches("lsn: 0/40, prev: 0/0, time: \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z, "
                + "len \\(rec/payload\\): 40/8, type: 0, crc: ok");
        assertThat(lines[1]).startsWith("lsn: " + Lsn.format(lsns.get(1)) + ", prev: 0/40,").contains("type: 1");
    }

    @Test
    void dumpShouldHonourFromAndTo() throws Exception {
        WaldenJar.Run run = WaldenJar.run(work, "dump", "--data-dir", log.toString(),
                "--from", Lsn.format(lsns.get(100)), "--to", Long.toString(lsns.get(110)));
        assertThat(run.exitCode()).isZero();
        assertThat(run.stdout().split("\n")).hasSize(10);
        assertThat(run.stdout()).startsWith("lsn: " + Lsn.format(lsns.get(100)) + ",");
    }

    @Test
    void dumpStatsShouldCountRecordsAndBytesPerType() throws Exception {
        WaldenJar.Run run = WaldenJar.run(work, "dump", "--data-dir", log.toString(), "--stats");
        assertThat(run.exitCode()).isZero();
        assertThat(run.stdout()).containsPattern("(?m)^0\\s+1000 \\( 33\\.33\\)")
                .containsPattern("(?m)^1\\s+1000 \\( 33\\.33\\)")
                .containsPattern("(?m)^Total\\s+3000 \\(100\\.00\\)");
    }

    @Test
    void dumpShouldShowStoredAndUncompressedSizesOfCompressedRecords() throws Exception {
        Path compressed = work.resolve("compressed");
        byte[] event = "{\"event\":\"order-placed\",\"currency\":\"EUR\"} ".repeat(40).getBytes();
        try (Wal wal = Wal.open(WalConfig.builder(compressed).segmentSize(SEGMENT).compression(Compression.ZSTD).build())) {
            for (int i = 0; i < 10; i++) {
                wal.append(7, event, Durability.OFF);
            }
        }
        WaldenJar.Run lines = WaldenJar.run(work, "dump", "--data-dir", compressed.toString());
        assertThat(lines.exitCode()).as(lines.stderr()).isZero();
        assertThat(lines.stdout().split("\n")[0]).contains("type: 7").contains("compression: zstd (uncompressed " + event.length + ")");
        WaldenJar.Run stats = WaldenJar.run(work, "dump", "--data-dir", compressed.toString(), "--stats");
        assertThat(stats.exitCode()).isZero();
        assertThat(stats.stdout()).contains("Uncompressed").containsPattern("(?m)^7\\s+10 \\(100\\.00\\).*\\s" + (10 * event.length) + "$");
    }

    @Test
    void verifyShouldPassACleanLog() throws Exception {
        WaldenJar.Run run = WaldenJar.run(work, "verify", "--data-dir", log.toString());
        assertThat(run.exitCode()).as(run.stdout() + run.stderr()).isZero();
        assertThat(run.stdout()).contains("3000 records").contains("clean");
    }

    @Test
    void verifyShouldNameTheFirstCorruptRecord() throws Exception {
        long bad = lsns.get(1500);
        flipBit(bad + 26);
        WaldenJar.Run run = WaldenJar.run(work, "verify", "--data-dir", log.toString());
        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.stdout()).contains("PROBLEM at " + Lsn.format(bad)).contains("CRC-32C mismatch")
                .contains("CORRUPTION");
    }

    @Test
    void verifyShouldReportATornTail() throws Exception {
        long end = lsns.get(2999) + 48; // "record 2999": 24 bytes of header, 8 of time and 11 of payload, aligned
        write(end, new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9});
        WaldenJar.Run run = WaldenJar.run(work, "verify", "--data-dir", log.toString());
        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.stdout()).contains("PROBLEM at " + Lsn.format(end));
    }

    @Test
    void testFsyncShouldMeasureEveryMethodAndRecommendOne() throws Exception {
        WaldenJar.Run run = WaldenJar.run(work, "test-fsync", "--dir", work.toString(), "--seconds", "0.2");
        assertThat(run.exitCode()).as(run.stderr()).isZero();
        assertThat(run.stdout()).contains("On a preallocated file:").contains("On a growing file:")
                .contains("write + fdatasync").contains("mmap store + msync(range)").contains("write, O_DSYNC")
                .containsPattern("Recommended sync method: (FDATASYNC|FSYNC|OPEN_DATASYNC)")
                .containsPattern("ceiling for one committer: about [\\d,]+ commits/s");
    }

    @Test
    void demoUsesATemporaryDirectoryAndLeavesTheWorkingDirectoryAsItWas() throws Exception {
        Path cwd = Files.createDirectories(work.resolve("cwd"));
        // A server's default directory, held: demo must not need it.
        try (Wal held = Wal.open(WalConfig.builder(cwd.resolve("walden-data")).segmentSize(SEGMENT).build())) {
            List<Path> before;
            try (var files = Files.list(cwd)) {
                before = files.sorted().toList();
            }
            WaldenJar.Run run = WaldenJar.run(cwd, "demo", "--records", "1000");
            assertThat(run.exitCode()).as(run.stdout() + run.stderr()).isZero();
            assertThat(run.stdout()).contains("Read back 1,000 records");
            try (var files = Files.list(cwd)) { // the held log's own files change meanwhile
                assertThat(files.sorted().filter(p -> !p.getFileName().toString().matches("(out|err).*\\.txt")).toList())
                        .isEqualTo(before);
            }
        }
    }

    @Test
    void aDirectoryAnotherProcessHoldsIsOneLineAndStatusTwo() throws Exception {
        try (Wal held = Wal.open(WalConfig.builder(log).segmentSize(SEGMENT).build())) {
            WaldenJar.assertOneLineUserError(WaldenJar.run(work, "demo", "--data-dir", log.toString()), "in use by another process");
            WaldenJar.assertOneLineUserError(WaldenJar.run(work, "serve", "--data-dir", log.toString(), "--http", "127.0.0.1:0",
                    "--replication-listen", "none"), "in use by another process");
        }
    }

    @Test
    void restoreRefusesAMistakenArchiveOrDirectoryInOneLine() throws Exception {
        WaldenJar.assertOneLineUserError(WaldenJar.run(work, "restore", "--from", "/path", "--data-dir", "x"), "s3://");
        WaldenJar.assertOneLineUserError(WaldenJar.run(work, "restore", "--from", "file://relative", "--data-dir", "x"), "file:///");
        Path missing = work.resolve("no-archive-here");
        WaldenJar.assertOneLineUserError(WaldenJar.run(work, "restore", "--from", missing.toUri().toString(), "--data-dir", "x"),
                "no archive at");
        assertThat(missing).as("a missing archive is not created").doesNotExist();
        WaldenJar.assertOneLineUserError(WaldenJar.run(work, "restore", "--from", work.toUri().toString(), "--data-dir",
                log.toString()), "not empty");
    }

    @Test
    void dumpAndVerifyNameADataDirThatIsNoDirectoryInOneLine() throws Exception {
        Path missing = work.resolve("no-log-here");
        for (String tool : new String[] {"dump", "verify"}) {
            WaldenJar.assertOneLineUserError(WaldenJar.run(work, tool, "--data-dir", missing.toString()),
                    "walden " + tool + ": --data-dir " + missing + ": no such directory");
        }
        Path file = Files.writeString(work.resolve("a-file"), "x");
        WaldenJar.assertOneLineUserError(WaldenJar.run(work, "dump", "--data-dir", file.toString()),
                "--data-dir " + file + ": not a directory");
    }

    @Test
    void everyCommandShouldHaveHelp() throws Exception {
        for (String command : new String[] {"demo", "dump", "verify", "test-fsync"}) {
            WaldenJar.Run run = WaldenJar.run(work, command, "--help");
            assertThat(run.exitCode()).isZero();
            assertThat(run.stdout()).startsWith("Usage: walden " + command);
        }
        WaldenJar.Run serve = WaldenJar.run(work, "serve", "--help");
        assertThat(serve.exitCode()).isZero();
        assertThat(serve.stdout()).startsWith("Usage: walden serve");
        assertThat(serve.stdout().replaceAll("\\s+", " ")).contains("Open by default")
                .contains("any local process may stream the whole log");
    }

    private void flipBit(long lsn) throws Exception {
        byte[] b = read(lsn);
        b[0] ^= 1;
        write(lsn, b);
    }

    private byte[] read(long lsn) throws Exception {
        try (FileChannel ch = FileChannel.open(segmentOf(lsn), StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, lsn & (SEGMENT - 1));
            return b.array();
        }
    }

    private void write(long lsn, byte[] bytes) throws Exception {
        try (FileChannel ch = FileChannel.open(segmentOf(lsn), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(bytes), lsn & (SEGMENT - 1));
        }
    }

    private Path segmentOf(long lsn) {
        return log.resolve(SegmentFiles.name(lsn & -SEGMENT));
    }
}
