package io.walden.core.archive;

import io.walden.core.Durability;
import io.walden.core.TestLogs;
import io.walden.core.Wal;
import io.walden.core.WalReader;
import io.walden.core.WalRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.walden.core.TestLogs.SMALL_SEGMENT;
import static org.assertj.core.api.Assertions.assertThat;

/** The archive against a real S3 API server (S3Proxy on loopback), through the AWS SDK and its default chains. */
class ArchiveS3Test {
    @TempDir
    static Path storeDir;
    static S3Server s3;

    @TempDir
    Path dir;
    @TempDir
    Path restored;
    @TempDir
    Path scratch;

    @BeforeAll
    static void startStore() throws Exception {
        S3Server.useDefaultChains();
        s3 = new S3Server(storeDir);
    }

    @AfterAll
    static void stopStore() throws Exception {
        s3.close();
    }

    @Test
    void putVerifiesAndGetListDeleteSeeTheObject() throws Exception {
        Path file = scratch.resolve("f");
        Files.write(file, TestLogs.payload(3, 3, 200_000));
        try (ArchiveTarget t = ArchiveTargets.open(s3.uri("objects"), s3.endpoint())) {
            t.put("a.wal", file, 1000);
            assertThat(t.list()).containsExactly(new ArchiveTarget.StoredObject("a.wal", 1000));
            Path back = scratch.resolve("back");
            assertThat(t.get("a.wal", back)).isTrue();
            assertThat(Files.readAllBytes(back)).isEqualTo(Arrays.copyOf(Files.readAllBytes(file), 1000));
            t.delete("a.wal");
            assertThat(t.list()).isEmpty();
            assertThat(t.get("a.wal", back)).isFalse();
        }
    }

    /**
     * A put opens the segment file for the body (once per try) and for its checksums: none of it may stay open, or every
     * archived segment would hold a descriptor on its file until a garbage collection, and a deleted segment's disk
     * space with it. (The SDK's HTTP client closes the body's stream; this holds it to that across upgrades.)
     */
    @Test
    void aPutLeavesNoDescriptorOpenOnTheSegmentFile() throws Exception {
        Path fds = Path.of("/proc/self/fd");
        Assumptions.assumeTrue(Files.isDirectory(fds), "needs /proc/self/fd (Linux)");
        Path file = scratch.resolve("segment");
        Files.write(file, new byte[100_000]);
        try (ArchiveTarget t = ArchiveTargets.open(s3.uri("descriptors"), s3.endpoint())) {
            for (int i = 0; i < 3; i++) {
                t.put("a" + i + ".wal", file, 100_000);
            }
            assertThat(descriptorsOn(fds, file)).as("descriptors still open on the file after its puts").isZero();
        }
    }

    private static long descriptorsOn(Path fds, Path file) throws Exception {
        Path real = file.toRealPath();
        long n = 0;
        try (var all = Files.list(fds)) {
            for (Path fd : all.toList()) {
                try {
                    n += Files.readSymbolicLink(fd).equals(real) ? 1 : 0;
                } catch (java.io.IOException closedMeanwhile) {
                    // the listing's own descriptor, or one closed since
                }
            }
        }
        return n;
    }

    /** Another log's archive under a prefix: apart from this one's objects, on the same client. */
    @Test
    void aTargetUnderAPrefixKeepsItsObjectsApartOnTheSameClient() throws Exception {
        Path file = scratch.resolve("f");
        Files.write(file, TestLogs.payload(3, 3, 1000));
        String uri = s3.uri("prefixed-" + System.nanoTime());
        try (ArchiveTarget root = ArchiveTargets.open(uri, s3.endpoint())) {
            root.put("a.wal", file, 10);
            try (ArchiveTarget orders = root.under("logs/orders/")) {
                orders.put("b.wal", file, 20);
            } // closing it leaves the client to the root target
            root.under("logs/audit/").put("c.wal", file, 30);
            assertThat(root.list()).containsExactly(new ArchiveTarget.StoredObject("a.wal", 10));
            assertThat(root.prefixes()).containsExactly("logs");
            assertThat(root.under("logs/").prefixes()).containsExactly("audit", "orders");
            assertThat(root.under("logs/orders/").list()).containsExactly(new ArchiveTarget.StoredObject("b.wal", 20));
            assertThat(root.under("logs/orders/").uri()).isEqualTo(uri + "/logs/orders/");
        }
        try (ArchiveTarget direct = ArchiveTargets.open(uri + "/logs/orders", s3.endpoint())) {
            assertThat(direct.list()).extracting(ArchiveTarget.StoredObject::name).containsExactly("b.wal");
        }
    }

    @Test
    void archivesToS3AndRestoresEveryRecord() throws Exception {
        String uri = s3.uri("log-" + System.nanoTime());
        List<byte[]> payloads = new ArrayList<>();
        try (ArchiveTarget target = ArchiveTargets.open(uri, s3.endpoint());
             Wal wal = Wal.open(TestLogs.small(dir).archive(ArchiveConfig.builder(target).timeout(Duration.ofMillis(100)).build()).build())) {
            for (int i = 0; i < 200; i++) {
                byte[] p = TestLogs.payload(2, i, 2000);
                payloads.add(p);
                wal.append(p, Durability.LOCAL);
            }
            assertThat(wal.status().archiver().orElseThrow().awaitArchived(wal.flushedLsn(), Duration.ofSeconds(30))).isTrue();
            assertThat(wal.status().archiver().orElseThrow().archivedSegments()).isGreaterThanOrEqualTo(wal.flushedLsn() / SMALL_SEGMENT);
        }
        try (ArchiveTarget from = ArchiveTargets.open(uri, s3.endpoint())) {
            assertThat(from.list()).extracting(ArchiveTarget.StoredObject::name).contains(ArchiveNames.segment(1, 0));
            Restore.fromArchive(from, restored, Long.MAX_VALUE, (i, n, name, bytes) -> {
            });
        }
        List<byte[]> back = new ArrayList<>();
        try (Wal wal = Wal.open(TestLogs.small(restored).build()); WalReader r = wal.reader(wal.oldestLsn())) {
            for (WalRecord rec = r.next(); rec != null; rec = r.next()) {
                back.add(rec.payload());
            }
        }
        assertThat(back).hasSameSizeAs(payloads);
        for (int i = 0; i < back.size(); i++) {
            assertThat(back.get(i)).isEqualTo(payloads.get(i));
        }
    }
}
