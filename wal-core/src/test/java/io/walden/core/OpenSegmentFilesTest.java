package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static io.walden.core.TestLogs.SMALL_SEGMENT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Segment files held open under a cap ({@link WalStoreConfig.Builder#maxOpenFiles}): sealed segments give back their
 * mappings and descriptors (counted for real, in {@code /proc/self}) and are mapped again when read; nothing they hold
 * is lost or misread on the way.
 */
class OpenSegmentFilesTest {
    /** Records of ~1 KiB: a 64 KiB segment holds about sixty. */
    private static final int RECORDS_PER_LOG = 1200;
    @TempDir
    Path dir;

    private static byte[] payload(String log, int i) {
        return TestLogs.bytes(log + " " + i + " " + "x".repeat(1000));
    }

    private static List<String> payloads(Wal wal) {
        List<String> out = new ArrayList<>();
        try (WalReader r = wal.reader(wal.oldestLsn())) {
            for (WalRecord rec; (rec = r.next()) != null; ) {
                out.add(TestLogs.string(rec.payload()));
            }
        }
        return out;
    }

    private static List<String> expected(String log, int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(TestLogs.string(payload(log, i)));
        }
        return out;
    }

    /** The segment files this process holds a descriptor of, under {@code under}. */
    private static long segmentDescriptors(Path under) {
        return ProcessFootprint.of(under).descriptorsUnder(under).stream().filter(d -> d.endsWith(".wal")).count();
    }

    /** The segment files this process maps, under {@code under}. */
    private static long segmentMappings(Path under) {
        return ProcessFootprint.of(under).mappings().stream().filter(m -> m.endsWith(".wal")).distinct().count();
    }

    private static long segmentFiles(Path logDir) throws Exception {
        try (Stream<Path> files = Files.list(logDir)) {
            return files.filter(p -> p.toString().endsWith(".wal")).count();
        }
    }

    private WalStoreConfig.Builder store(int maxOpenFiles) {
        return WalStoreConfig.builder(dir).maxOpenFiles(maxOpenFiles)
                .defaults(b -> b.segmentSize(SMALL_SEGMENT).checkpointInterval(Duration.ofMillis(50)));
    }

    @Test
    void aStoreHoldsNoMoreSealedSegmentsOpenThanItsCapAndReadsThemAllBack() throws Exception {
        int cap = 8;
        List<String> names = List.of("a", "b", "c");
        try (WalStore store = WalStore.open(store(cap).build())) {
            for (String name : names) {
                Wal wal = store.create(name);
                for (int i = 0; i < RECORDS_PER_LOG; i++) {
                    wal.append(payload(name, i), Durability.LOCAL);
                }
                assertThat(segmentFiles(dir.resolve("logs").resolve(name))).isGreaterThan(15);
            }
            // Each log writes into one segment and has the next prepared: those stay open, the sealed ones go to the cap.
            long allowed = cap + 2L * names.size();
            Eventually.waitUntil("sealed segments parked down to the cap",
                    () -> segmentMappings(dir) <= allowed && segmentDescriptors(dir) <= 2 * allowed);
            for (String name : names) {
                Wal wal = store.log(name).orElseThrow();
                assertThat(payloads(wal)).as(name).isEqualTo(expected(name, RECORDS_PER_LOG));
                assertThat(wal.lsnAt(Instant.EPOCH)).as("a time seek over parked segments").isEqualTo(wal.oldestLsn());
            }
            Eventually.waitUntil("the segments mapped again for the reads parked again",
                    () -> segmentMappings(dir) <= allowed && segmentDescriptors(dir) <= 2 * allowed);
        }
        assertThat(segmentMappings(dir)).isZero();
        assertThat(segmentDescriptors(dir)).isZero();
    }

    @Test
    void aLogOpensWithItsSealedSegmentsUnmappedAndReadsThemAllBack() throws Exception {
        Path logDir = dir.resolve("log");
        try (Wal wal = Wal.open(TestLogs.small(logDir).build())) {
            for (int i = 0; i < RECORDS_PER_LOG; i++) {
                wal.append(payload("log", i), Durability.OFF);
            }
        }
        assertThat(segmentFiles(logDir)).isGreaterThan(15);
        try (Wal wal = Wal.open(TestLogs.small(logDir).build())) {
            assertThat(segmentMappings(logDir)).as("the segment the log ends in, and the next").isLessThanOrEqualTo(2);
            assertThat(payloads(wal)).isEqualTo(expected("log", RECORDS_PER_LOG));
            long next = wal.append(payload("log", RECORDS_PER_LOG), Durability.LOCAL);
            try (WalReader r = wal.reader(next)) {
                assertThat(TestLogs.string(r.next().payload())).isEqualTo(TestLogs.string(payload("log", RECORDS_PER_LOG)));
            }
        }
    }

    @Test
    void anIdleLogGivesBackEverySegmentsMappingAndDescriptorsAndTakesAppendsAgain() throws Exception {
        int half = RECORDS_PER_LOG / 2;
        Path logDir = dir.resolve("logs").resolve("idle");
        // The idle period shortened from its default (5 s), so that the test waits less for the log to go idle.
        try (WalStore store = WalStore.open(store(10_000).defaults(b -> b.segmentSize(SMALL_SEGMENT)
                .checkpointInterval(Duration.ofMillis(50)).idleAfter(Duration.ofMillis(500))).build())) {
            Wal wal = store.create("idle");
            for (int i = 0; i < half; i++) {
                wal.append(payload("idle", i), Durability.LOCAL);
            }
            assertThat(segmentMappings(logDir)).isGreaterThan(5);
            Eventually.waitUntil("the idle log's segments parked, the one it ends in and the next included",
                    () -> segmentMappings(logDir) == 0 && segmentDescriptors(logDir) == 0);
            for (int i = half; i < RECORDS_PER_LOG; i++) {
                wal.append(payload("idle", i), Durability.LOCAL);
            }
            assertThat(payloads(wal)).isEqualTo(expected("idle", RECORDS_PER_LOG));
        }
        try (WalStore store = WalStore.open(store(10_000).build())) {
            assertThat(payloads(store.log("idle").orElseThrow())).isEqualTo(expected("idle", RECORDS_PER_LOG));
        }
    }

    @Test
    void retentionRemovesParkedSegmentsWithTheirFiles() throws Exception {
        try (WalStore store = WalStore.open(store(1).build())) {
            Wal wal = store.create("kept", b -> b.retentionBytes(4 * SMALL_SEGMENT));
            for (int i = 0; i < RECORDS_PER_LOG; i++) {
                wal.append(payload("kept", i), Durability.LOCAL);
            }
            Path logDir = dir.resolve("logs").resolve("kept");
            Eventually.waitUntil("retention down to its bytes, the sealed segments parked",
                    () -> segmentFiles(logDir) <= 6 && segmentMappings(logDir) <= 3);
            // A removal renames the file, then deletes it once no reader holds it: a moment apart, so waited for.
            Eventually.waitUntil("removed segments gone once nobody reads them", () -> retiredFiles(logDir) == 0);
            List<String> left = payloads(wal);
            assertThat(left).isNotEmpty().isEqualTo(expected("kept", RECORDS_PER_LOG)
                    .subList(RECORDS_PER_LOG - left.size(), RECORDS_PER_LOG));
        }
    }

    private static long retiredFiles(Path logDir) throws IOException {
        try (Stream<Path> files = Files.list(logDir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".retired")).count();
        }
    }
}
