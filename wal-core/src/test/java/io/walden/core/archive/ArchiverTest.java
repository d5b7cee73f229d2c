package io.walden.core.archive;

import io.walden.core.AppendsBlockedException;
import io.walden.core.Durability;
import io.walden.core.Eventually;
import io.walden.core.SegmentInfo;
import io.walden.core.TestLogs;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.internal.archive.ArchiveStatus;
import io.walden.core.internal.archive.Archiver;
import io.walden.core.internal.segment.SegmentFiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

import static io.walden.core.TestLogs.SMALL_SEGMENT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The archiver against a directory archive (file://); ArchiveS3Test runs it against a real S3 API server. */
class ArchiverTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;
    @TempDir
    Path archiveDir;

    private WalConfig.Builder archived(ArchiveConfig.Builder archive) {
        return TestLogs.small(dir).archive(archive.build());
    }

    private ArchiveConfig.Builder toDirectory() throws Exception {
        return ArchiveConfig.builder(new FileArchiveTarget(archiveDir)).retry(Duration.ofMillis(20), Duration.ofMillis(200));
    }

    static void fill(Wal wal, int records, int size) {
        for (int i = 0; i < records; i++) {
            wal.append(new byte[size], Durability.OFF);
        }
        wal.flush();
    }

    static byte[] bytesOf(Path file, long length) throws Exception {
        byte[] all = Files.readAllBytes(file);
        return Arrays.copyOf(all, (int) length);
    }

    @Test
    void archivesEverySealedSegmentByteForByteAndMarksItDone() throws Exception {
        try (Wal wal = Wal.open(archived(toDirectory()).build())) {
            fill(wal, 300, 1000);
            ArchiverStatus archiver = wal.status().archiver().orElseThrow();
            long sealedEnd = wal.flushedLsn() / SMALL_SEGMENT * SMALL_SEGMENT;
            assertThat(archiver.awaitArchived(sealedEnd, WAIT)).isTrue();
            for (SegmentInfo s : wal.status().segments()) {
                if (s.endLsn() <= wal.flushedLsn()) {
                    Path object = archiveDir.resolve(ArchiveNames.segment(1, s.startLsn()));
                    assertThat(Files.readAllBytes(object)).as(object.toString()).isEqualTo(Files.readAllBytes(s.path()));
                    assertThat(dir.resolve(ArchiveStatus.DIR).resolve(s.path().getFileName() + ".done")).exists();
                }
            }
            assertThat(archiver.archivedSegments()).isGreaterThanOrEqualTo(sealedEnd / SMALL_SEGMENT);
            assertThat(archiver.lastError()).isNull();
        }
    }

    @Test
    void neverTruncatesASegmentBeforeItIsArchived() throws Exception {
        try (Wal wal = Wal.open(archived(toDirectory()).build())) {
            deleteDirectory(archiveDir);
            Files.writeString(archiveDir, "a file where the archive directory was: every put fails");
            fill(wal, 300, 1000);
            wal.truncateBefore(wal.flushedLsn());
            assertThat(wal.oldestLsn()).as("nothing archived, nothing removed").isEqualTo(64);
            assertThat(Eventually.holds(() -> wal.status().archiver().orElseThrow().lastError() != null))
                    .as("the failed upload is reported").isTrue();
            assertThat(wal.status().archiver().orElseThrow().failures()).isPositive();

            Files.delete(archiveDir);
            Files.createDirectories(archiveDir); // the store is back
            long sealedEnd = wal.flushedLsn() / SMALL_SEGMENT * SMALL_SEGMENT;
            assertThat(wal.status().archiver().orElseThrow().awaitArchived(sealedEnd, WAIT)).isTrue();
            wal.truncateBefore(wal.flushedLsn());
            assertThat(wal.oldestLsn()).isGreaterThan(64);
            assertThat(wal.status().archiver().orElseThrow().lastError()).isNull();
        }
    }

    @Test
    void archiveStatusSurvivesARestartAndNothingIsUploadedTwice() throws Exception {
        long archived;
        try (Wal wal = Wal.open(archived(toDirectory()).build())) {
            fill(wal, 300, 1000);
            archived = wal.flushedLsn() / SMALL_SEGMENT * SMALL_SEGMENT;
            assertThat(wal.status().archiver().orElseThrow().awaitArchived(archived, WAIT)).isTrue();
        }
        // Dated in the past: an upload in the next run would change the time, however coarse the file system's clock.
        FileTime modifiedBefore = FileTime.fromMillis(0);
        Files.setLastModifiedTime(archiveDir.resolve(ArchiveNames.segment(1, 0)), modifiedBefore);
        try (Wal wal = Wal.open(archived(toDirectory()).build())) {
            assertThat(wal.status().archiver().orElseThrow().archivedLsn()).isGreaterThanOrEqualTo(archived);
            Eventually.holdsThroughout("no upload in this run", 3 * Archiver.POLL_MILLIS,
                    () -> wal.status().archiver().orElseThrow().archivedSegments() == 0);
        }
        assertThat(Files.getLastModifiedTime(archiveDir.resolve(ArchiveNames.segment(1, 0)))).isEqualTo(modifiedBefore);
    }

    @Test
    void aSegmentWhoseMarkerWasNotDurableIsUploadedAgain() throws Exception {
        try (Wal wal = Wal.open(archived(toDirectory()).build())) {
            fill(wal, 300, 1000);
            long sealedEnd = wal.flushedLsn() / SMALL_SEGMENT * SMALL_SEGMENT;
            assertThat(wal.status().archiver().orElseThrow().awaitArchived(sealedEnd, WAIT)).isTrue();
        }
        // A crash after the upload but before the marker reached the disk: the marker is gone, the object is there.
        Files.delete(dir.resolve(ArchiveStatus.DIR).resolve(SegmentFiles.name(SMALL_SEGMENT) + ".done"));
        Files.writeString(archiveDir.resolve(ArchiveNames.segment(1, SMALL_SEGMENT)), "a half-written object");
        try (Wal wal = Wal.open(archived(toDirectory()).build())) {
            ArchiverStatus archiver = wal.status().archiver().orElseThrow();
            Eventually.waitUntil(() -> archiver.archivedSegments() > 0);
            Eventually.holdsThroughout("uploaded again in this run, and only it", 3 * Archiver.POLL_MILLIS,
                    () -> archiver.archivedSegments() == 1);
            assertThat(Files.readAllBytes(archiveDir.resolve(ArchiveNames.segment(1, SMALL_SEGMENT))))
                    .isEqualTo(Files.readAllBytes(dir.resolve(SegmentFiles.name(SMALL_SEGMENT))));
        }
    }

    @Test
    void aRewoundReplicaForgetsWhatItArchivedAndItsPromotionArchivesTheNewEpochBesideTheOldHistory() throws Exception {
        try (Wal wal = Wal.open(archived(toDirectory()).build())) {
            List<Long> lsns = new ArrayList<>();
            for (int i = 0; i < 400; i++) {
                lsns.add(wal.append(new byte[1000], Durability.OFF));
            }
            wal.flush();
            assertThat(wal.status().archiver().orElseThrow().awaitArchived(5 * SMALL_SEGMENT, WAIT)).isTrue();
            long rewindPoint = lsns.stream().filter(l -> l > SMALL_SEGMENT + 5000).findFirst().orElseThrow();
            Path marker2 = dir.resolve(ArchiveStatus.DIR).resolve(SegmentFiles.name(2 * SMALL_SEGMENT) + ".done");
            assertThat(marker2).exists();
            long modified0 = Files.getLastModifiedTime(archiveDir.resolve(ArchiveNames.segment(1, 0))).toMillis();

            wal.replication().refuseAppends("a replica of the new primary"); // an old primary rejoining
            wal.replication().rewindTo(rewindPoint);
            assertThat(marker2).as("segments past the rewind hold other bytes now").doesNotExist();
            assertThat(dir.resolve(ArchiveStatus.DIR).resolve(SegmentFiles.name(0) + ".done")).exists();

            assertThat(wal.status().archiver().orElseThrow().archivedLsn()).as("the archive ends at the rewind")
                    .isLessThanOrEqualTo(rewindPoint);
            wal.replication().promote(); // a new epoch at the rewind point: the archive past it is the old history
            fill(wal, 200, 1000); // the new epoch seals segment 1 again, and more
            long sealed = wal.flushedLsn() / SMALL_SEGMENT * SMALL_SEGMENT;
            assertThat(wal.status().archiver().orElseThrow().awaitArchived(sealed, WAIT)).isTrue();
            assertThat(archiveDir.resolve(ArchiveNames.history(2))).as("the epoch's history, before its objects").exists();
            for (long start = SMALL_SEGMENT; start < sealed; start += SMALL_SEGMENT) {
                assertThat(Files.readAllBytes(archiveDir.resolve(ArchiveNames.segment(2, start))))
                        .as(ArchiveNames.segment(2, start)).isEqualTo(Files.readAllBytes(dir.resolve(SegmentFiles.name(start))));
            }
            assertThat(archiveDir.resolve(ArchiveNames.segment(1, 2 * SMALL_SEGMENT))).as("the old history's object stays, "
                    + "under its own epoch's name").exists();
            assertThat(Files.getLastModifiedTime(archiveDir.resolve(ArchiveNames.segment(1, 0))).toMillis())
                    .as("below the epoch's start: the same bytes, not uploaded again").isEqualTo(modified0);
        }
    }

    @Test
    void aQuietSegmentReachesTheArchiveAfterTheTimeout() throws Exception {
        try (Wal wal = Wal.open(archived(toDirectory().timeout(Duration.ofMillis(200))).build())) {
            long lsn = wal.append(TestLogs.bytes("lonely record"), Durability.LOCAL);
            ArchiverStatus archiver = wal.status().archiver().orElseThrow();
            assertThat(archiver.awaitArchived(wal.flushedLsn(), WAIT)).isTrue();
            Path partial = archiveDir.resolve(ArchiveNames.partial(1, 0));
            assertThat(partial).exists();
            assertThat(Files.size(partial)).isEqualTo(wal.flushedLsn());
            assertThat(Files.readAllBytes(partial)).isEqualTo(bytesOf(dir.resolve(SegmentFiles.name(0)), wal.flushedLsn()));
            assertThat(lsn).isLessThan(wal.flushedLsn());

            fill(wal, 100, 1000); // seals segment 0: the whole segment replaces its head
            assertThat(archiver.awaitArchived(SMALL_SEGMENT, WAIT)).isTrue();
            assertThat(archiveDir.resolve(ArchiveNames.segment(1, 0))).exists();
            Eventually.waitUntil(() -> !Files.exists(partial));
        }
    }

    @Test
    void blocksAppendsAtTheCapAndResumesWhenTheArchiveCatchesUp() throws Exception {
        ArchiveConfig.Builder capped = toDirectory().maxPendingBytes(3 * SMALL_SEGMENT).timeout(Duration.ZERO);
        try (Wal wal = Wal.open(archived(capped).build())) {
            deleteDirectory(archiveDir);
            Files.writeString(archiveDir, "the store is down");
            Throwable refused = null;
            long appended = 0;
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (refused == null && System.nanoTime() < deadline) {
                try {
                    wal.append(new byte[1000], Durability.LOCAL);
                    appended++;
                } catch (AppendsBlockedException e) {
                    refused = e;
                }
            }
            assertThat(refused).isNotNull();
            assertThat(refused.getMessage()).contains("archive").contains("behind").contains(archiveDir.toUri().toString());
            assertThat(appended * 1000).isGreaterThan(3 * SMALL_SEGMENT - SMALL_SEGMENT);
            assertThat(wal.status().archiver().orElseThrow().blocking()).isTrue();

            Files.delete(archiveDir);
            Files.createDirectories(archiveDir);
            assertThat(Eventually.holds(() -> appends(wal))).as("appends resume once the archive caught up").isTrue();
            assertThat(wal.status().archiver().orElseThrow().blocking()).isFalse();
        }
    }

    @Test
    void whileAppendsAreBlockedAStoreThatCameBackIsFoundWithinASecondWhateverTheBackoff() throws Exception {
        try (Wal wal = Wal.open(archived(cappedWithA30sBackoff()).build())) {
            blockAtTheCapThenBringTheStoreBack(wal);
            long back = System.nanoTime();
            assertThat(Eventually.holdsWithin(10, () -> appends(wal))).as("appends resume long before the 30 s backoff ends")
                    .isTrue();
            System.out.printf("ArchiverTest: appends resumed %d ms after the store came back (backoff 30 s)%n",
                    (System.nanoTime() - back) / 1_000_000);
        }
    }

    /**
     * The cap lets appends in again while segments are still pending (the lag is back under it, not at zero): those
     * go up at once too, not when the backoff of the last failure would have ended.
     */
    @Test
    void onceTheCapLetsAppendsInAgainTheSegmentsStillPendingGoUpWithoutWaitingForTheBackoff() throws Exception {
        try (Wal wal = Wal.open(archived(cappedWithA30sBackoff()).build())) {
            blockAtTheCapThenBringTheStoreBack(wal);
            ArchiverStatus archiver = wal.status().archiver().orElseThrow();
            assertThat(Eventually.holdsWithin(10, () -> archiver.pendingSegments() == 0 && !archiver.blocking()))
                    .as("the backlog is archived long before the 30 s backoff ends").isTrue();
        }
    }

    /** A cap of three segments, and a backoff that alone would put the next attempt 30 s or more after a failure. */
    private ArchiveConfig.Builder cappedWithA30sBackoff() throws Exception {
        return ArchiveConfig.builder(new FileArchiveTarget(archiveDir)).retry(Duration.ofSeconds(30), Duration.ofSeconds(60))
                .maxPendingBytes(3 * SMALL_SEGMENT).timeout(Duration.ZERO);
    }

    /** Takes the store down, appends until the cap refuses them, and brings the store back. */
    private void blockAtTheCapThenBringTheStoreBack(Wal wal) throws Exception {
        deleteDirectory(archiveDir);
        Files.writeString(archiveDir, "the store is down");
        long deadline = System.nanoTime() + WAIT.toNanos();
        boolean blocked = false;
        while (!blocked && System.nanoTime() < deadline) {
            blocked = !appends(wal);
        }
        assertThat(blocked).as("appends blocked at the cap").isTrue();
        Files.delete(archiveDir);
        Files.createDirectories(archiveDir);
    }

    /** Whether a 1000-byte LOCAL append is taken (false: refused, the archive too far behind). */
    private static boolean appends(Wal wal) {
        try {
            wal.append(new byte[1000], Durability.LOCAL);
            return true;
        } catch (AppendsBlockedException e) {
            return false;
        }
    }

    @Test
    void dropArchiveGivesUpTheOldestSegmentsAndKeepsAppending() throws Exception {
        ArchiveConfig.Builder dropping = toDirectory().maxPendingBytes(2 * SMALL_SEGMENT).timeout(Duration.ZERO)
                .whenFull(ArchiveConfig.WhenFull.DROP_ARCHIVE);
        try (Wal wal = Wal.open(archived(dropping).build())) {
            deleteDirectory(archiveDir);
            Files.writeString(archiveDir, "the store is down");
            for (int i = 0; i < 10; i++) {
                fill(wal, 60, 1000); // never blocked: appends go on whatever the archive's lag
            }
            ArchiverStatus archiver = wal.status().archiver().orElseThrow();
            // The cap is applied on the archiver's next turn.
            Eventually.waitUntil(() -> archiver.droppedSegments() > 0 && archiver.lagBytes() <= 2 * SMALL_SEGMENT);
            assertThat(archiver.droppedSegments()).isPositive();
            assertThat(archiver.lagBytes()).isLessThanOrEqualTo(2 * SMALL_SEGMENT);
            wal.truncateBefore(wal.flushedLsn());
            assertThat(wal.oldestLsn()).as("dropped segments may be removed").isGreaterThan(64);
        }
    }

    @Test
    void aReplicasLogIsHeldBackUntilItsPrimaryReportsWhatTheArchiveHolds() throws Exception {
        try (Wal wal = Wal.open(archived(toDirectory()).build())) {
            wal.replication().refuseAppends("a replica of primary p");
            Archiver archiver = (Archiver) wal.status().archiver().orElseThrow(); // what truncation asks of it
            assertThat(archiver.retentionFloor()).isEqualTo(wal.status().segments().get(0).startLsn());
            wal.replication().primaryArchived(Long.MAX_VALUE); // its primary keeps no archive
            assertThat(archiver.retentionFloor()).isEqualTo(Long.MAX_VALUE);
        }
    }

    @Test
    void aLogArchivedSomewhereElseNowArchivesEverySegmentThereAgain() throws Exception {
        long sealedEnd;
        try (Wal wal = Wal.open(archived(toDirectory()).build())) {
            fill(wal, 300, 1000);
            sealedEnd = wal.flushedLsn() / SMALL_SEGMENT * SMALL_SEGMENT;
            assertThat(wal.status().archiver().orElseThrow().awaitArchived(sealedEnd, WAIT)).isTrue();
        }
        Path elsewhere = dir.resolveSibling(dir.getFileName() + "-new-archive");
        try (Wal wal = Wal.open(TestLogs.small(dir).archive(ArchiveConfig.builder(new FileArchiveTarget(elsewhere))
                .retry(Duration.ofMillis(20), Duration.ofMillis(200)).build()).build())) {
            assertThat(wal.status().archiver().orElseThrow().awaitArchived(sealedEnd, WAIT)).isTrue();
            for (long start = 0; start < sealedEnd; start += SMALL_SEGMENT) {
                assertThat(elsewhere.resolve(ArchiveNames.segment(1, start))).as("segment %x in the new archive", start)
                        .exists();
            }
        } finally {
            deleteDirectory(elsewhere);
        }
    }

    @Test
    void refusesACapSmallerThanTwoSegments() throws Exception {
        assertThatThrownBy(() -> Wal.open(archived(toDirectory().maxPendingBytes(SMALL_SEGMENT)).build()))
                .hasMessageContaining("two segments");
    }

    static void deleteDirectory(Path d) throws Exception {
        try (var files = Files.walk(d)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /** Flips one byte of a file (a damaged archived object). */
    static void flip(Path file, long offset) throws Exception {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, offset);
            b.put(0, (byte) (b.get(0) ^ 0x40));
            b.rewind();
            ch.write(b, offset);
        }
    }
}
