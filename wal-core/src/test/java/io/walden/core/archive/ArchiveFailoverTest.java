package io.walden.core.archive;

import io.walden.core.Durability;
import io.walden.core.Epoch;
import io.walden.core.EpochHistory;
import io.walden.core.Eventually;
import io.walden.core.ReplicationChunk;
import io.walden.core.TestLogs;
import io.walden.core.Wal;
import io.walden.core.WalReader;
import io.walden.core.WalRecord;
import io.walden.core.internal.segment.SegmentFiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.walden.core.TestLogs.SMALL_SEGMENT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An archive shared across a failover (docs/operations.md, "Backup and restore"): the old primary's upload that was in
 * flight when its replica was promoted lands after the new primary archived the same segment, and a restore must still
 * return only the group's history: the records both share, then the new primary's, never the old one's after the point
 * where the new epoch began.
 */
class ArchiveFailoverTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path work;

    /** A directory archive whose put of one object waits at a gate: an upload in flight, held as long as a test needs. */
    private static final class GatedTarget implements ArchiveTarget {
        private final FileArchiveTarget files;
        private final String suffix;
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final CountDownLatch done = new CountDownLatch(1);

        /** Holds the put of the object whose name ends with {@code suffix} (whatever epoch the name carries). */
        GatedTarget(Path dir, String suffix) throws IOException {
            this.files = new FileArchiveTarget(dir);
            this.suffix = suffix;
        }

        @Override
        public String uri() {
            return files.uri();
        }

        @Override
        public void put(String name, Path file, long length) throws IOException {
            boolean gated = name.endsWith(suffix);
            if (gated) {
                entered.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted at the gate", e);
                }
            }
            files.put(name, file, length);
            if (gated) {
                done.countDown();
            }
        }

        @Override
        public boolean get(String name, Path dest) throws IOException {
            return files.get(name, dest);
        }

        @Override
        public List<StoredObject> list() throws IOException {
            return files.list();
        }

        @Override
        public void delete(String name) throws IOException {
            files.delete(name);
        }

        @Override
        public ArchiveTarget under(String prefix) {
            return files.under(prefix);
        }

        @Override
        public List<String> prefixes() throws IOException {
            return files.prefixes();
        }

        @Override
        public void close() {
            files.close();
        }
    }

    private static byte[] payload(char c, int i) {
        byte[] p = new byte[1000];
        Arrays.fill(p, (byte) c);
        p[0] = (byte) i;
        return p;
    }

    /** Copies what {@code primary} wrote from the replica's end, and lets the replica's readers see what it flushed. */
    private static void catchUp(Wal primary, Wal replica) {
        long position = replica.insertLsn();
        for (ReplicationChunk chunk; (chunk = primary.replication().readWritten(position, 8192)) != null; ) {
            position = replica.replication().writeReceived(chunk.startLsn(), chunk.bytes());
        }
        replica.flush();
        replica.replication().raiseReadLimit(primary.flushedLsn());
    }

    private static List<Character> restoredKinds(Path dir) {
        List<Character> kinds = new ArrayList<>();
        try (Wal wal = Wal.open(TestLogs.small(dir).build()); WalReader r = wal.reader(wal.oldestLsn())) {
            for (WalRecord rec; (rec = r.next()) != null; ) {
                kinds.add((char) rec.payload()[1]);
            }
        }
        return kinds;
    }

    private static void awaitFile(Path file) throws Exception {
        Eventually.waitUntil("a file at " + file, () -> Files.exists(file));
    }

    /**
     * Runs the failover: A archives through a gate held on segment 1; B, its replica, takes 80 records, is promoted at
     * X (inside segment 1) while A's upload of segment 1, with 60 records of its own past X, is in flight; B appends
     * {@code newRecords}. The gate opens only once B archived what it could. Returns the LSNs of B's records.
     */
    private List<Long> failOver(Path archive, int newRecords, boolean bSealsSegmentOne) throws Exception {
        GatedTarget gated = new GatedTarget(archive, SegmentFiles.name(SMALL_SEGMENT));
        List<Long> bLsns = new ArrayList<>();
        try (Wal a = Wal.open(TestLogs.small(work.resolve("a")).archive(ArchiveConfig.builder(gated).timeout(Duration.ZERO).build()).build());
             Wal b = Wal.open(TestLogs.small(work.resolve("b")).logId(a.status().logId())
                     .archive(ArchiveConfig.builder(new FileArchiveTarget(archive)).timeout(Duration.ZERO).build()).build())) {
            b.replication().refuseAppends("a replica of a");
            for (int i = 0; i < 80; i++) {
                a.append(payload('R', i), Durability.OFF);
            }
            a.flush();
            catchUp(a, b);
            long x = b.insertLsn();
            assertThat(x).as("the new epoch begins inside segment 1").isBetween(SMALL_SEGMENT, 2 * SMALL_SEGMENT);
            for (int i = 0; i < 60; i++) {
                a.append(payload('X', i), Durability.OFF); // never reached b: nothing of it was acknowledged by the group
            }
            a.flush();
            assertThat(gated.entered.await(20, TimeUnit.SECONDS)).as("a's upload of segment 1 in flight").isTrue();
            a.replication().refuseAppends("fenced: the group elected b");

            b.replication().promote();
            for (int i = 0; i < newRecords; i++) {
                bLsns.add(b.append(payload('B', i), Durability.OFF));
            }
            b.flush();
            awaitFile(archive.resolve(ArchiveNames.history(2)));
            if (bSealsSegmentOne) {
                assertThat(b.status().archiver().orElseThrow().awaitArchived(2 * SMALL_SEGMENT, WAIT)).isTrue();
                assertThat(archive.resolve(ArchiveNames.segment(2, SMALL_SEGMENT))).exists();
            }
            gated.release.countDown();
            assertThat(gated.done.await(20, TimeUnit.SECONDS)).as("a's late upload landed").isTrue();
        }
        return bLsns;
    }

    @Test
    void aRestoreAfterAFailoverReturnsTheNewPrimarysRecordsNotTheOldPrimarysLateUpload() throws Exception {
        Path archive = work.resolve("archive");
        List<Long> b = failOver(archive, 60, true);
        Restore.Result result = Restore.fromArchive(new FileArchiveTarget(archive), work.resolve("restored"),
                b.get(10), (i, n, name, bytes) -> {
                });

        List<Character> kinds = restoredKinds(work.resolve("restored"));
        assertThat(kinds).as("80 shared records, then b's first 10, and none of a's after the epoch began")
                .hasSize(90).doesNotContain('X');
        assertThat(kinds.subList(80, 90)).containsOnly('B');
        assertThat(result.history().epochs()).extracting(Epoch::number).containsExactly(1, 2, 3);
    }

    @Test
    void aRestoreWhoseNewEpochIsNotArchivedYetStopsWhereTheOldEpochEnded() throws Exception {
        Path archive = work.resolve("archive");
        failOver(archive, 5, false); // b's segment 1 is not sealed: only a's late copy of it is in the archive
        Restore.Result result = Restore.fromArchive(new FileArchiveTarget(archive), work.resolve("restored"),
                Long.MAX_VALUE, (i, n, name, bytes) -> {
                });

        List<Character> kinds = restoredKinds(work.resolve("restored"));
        assertThat(kinds).as("only what both histories share").hasSize(80).containsOnly('R');
        assertThat(result.shortOf(Long.MAX_VALUE)).isFalse();
        EpochHistory archived = result.history();
        assertThat(archived.epochs().get(1).number()).isEqualTo(2);
        assertThat(result.endLsn()).isEqualTo(archived.epochs().get(1).startLsn());
    }
}
