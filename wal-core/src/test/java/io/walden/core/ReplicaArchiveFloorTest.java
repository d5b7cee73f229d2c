package io.walden.core;

import io.walden.core.archive.ArchiveConfig;
import io.walden.core.archive.ArchiveNames;
import io.walden.core.archive.ArchiverStatus;
import io.walden.core.archive.FileArchiveTarget;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static io.walden.core.TestLogs.SMALL_SEGMENT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a replica's truncation keeps (docs/replication.md, "Retention and the archive"): every segment the group's archive
 * does not hold yet, as its primary reported, whatever its own settings; and never the segment its read limit is in,
 * which a rewind may go back to.
 */
class ReplicaArchiveFloorTest {
    private static final int SEGMENTS = 8;

    @TempDir
    Path work;
    @TempDir
    Path archiveDir;

    /** A primary holding {@value #SEGMENTS} segments of records, all of them on the replica, and reported flushed. */
    private static void fill(Wal primary, Wal replica) {
        byte[] record = new byte[1000];
        while (primary.insertLsn() < SEGMENTS * SMALL_SEGMENT) {
            primary.append(record, Durability.OFF);
        }
        primary.flush();
        Replicas.catchUp(primary, replica);
    }

    private Wal replicaWithAnArchive(Wal primary, WalConfig.Builder settings) throws Exception {
        return replicaWithAnArchive(primary, settings, ArchiveConfig.builder(new FileArchiveTarget(archiveDir)));
    }

    private Wal replicaWithAnArchive(Wal primary, WalConfig.Builder settings, ArchiveConfig.Builder archive) {
        Wal replica = Wal.open(settings.logId(primary.status().logId()).archive(archive.build()).build());
        replica.replication().refuseAppends(Replicas.REFUSAL);
        return replica;
    }

    @Test
    void aReplicaKeepsEverySegmentUntilItsPrimaryReportsWhatTheArchiveHolds() throws Exception {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal replica = replicaWithAnArchive(primary, TestLogs.small(work.resolve("replica")))) {
            fill(primary, replica);
            long oldest = replica.oldestLsn();

            replica.truncateBefore(replica.flushedLsn());

            assertThat(replica.oldestLsn()).as("nothing removed: the group's archive may lack any of it").isEqualTo(oldest);
        }
    }

    @Test
    void aReplicaRemovesOnlyTheSegmentsItsPrimaryReportedArchived() throws Exception {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal replica = replicaWithAnArchive(primary, TestLogs.small(work.resolve("replica")))) {
            fill(primary, replica);

            replica.replication().primaryArchived(3 * SMALL_SEGMENT);
            replica.truncateBefore(replica.flushedLsn());

            assertThat(replica.status().segments().get(0).startLsn()).isEqualTo(3 * SMALL_SEGMENT);
        }
    }

    @Test
    void aReplicasLogReopenedWithRetentionKeepsEverythingBeforeItsRoleIsKnown() throws Exception {
        Path replicaDir = work.resolve("replica");
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build())) {
            try (Wal replica = Replicas.open(primary, replicaDir)) {
                fill(primary, replica);
            }
            // Reopened as a group member or a restarted replica is, retention running before anything refuses appends:
            // its read limit, kept in its control file, says it is a replica's log.
            try (Wal reopened = Wal.open(TestLogs.small(replicaDir).logId(primary.status().logId())
                    .retentionBytes(2 * SMALL_SEGMENT).build())) {
                long oldest = reopened.oldestLsn();
                assertThat(Eventually.holds(() -> reopened.status().retention().heldBy().stream()
                        .anyMatch(h -> h.holder().equals("archive")))).isTrue();
                assertThat(reopened.oldestLsn()).isEqualTo(oldest);
            }
        }
    }

    @Test
    void aReplicaWithoutAnArchiveOfItsOwnStillKeepsWhatTheGroupsArchiveLacks() {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal replica = Replicas.open(primary, work.resolve("replica"))) {
            fill(primary, replica);
            long oldest = replica.oldestLsn();
            replica.truncateBefore(replica.flushedLsn());
            assertThat(replica.oldestLsn()).isEqualTo(oldest);

            replica.replication().primaryArchived(2 * SMALL_SEGMENT);
            replica.truncateBefore(replica.flushedLsn());
            assertThat(replica.status().segments().get(0).startLsn()).isEqualTo(2 * SMALL_SEGMENT);
        }
    }

    @Test
    void aReplicaOfAPrimaryThatKeepsNoArchiveKeepsNothingForOne() throws Exception {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal replica = replicaWithAnArchive(primary, TestLogs.small(work.resolve("replica")))) {
            fill(primary, replica);
            assertThat(primary.replication().archivedFloor()).as("what a primary without an archive tells")
                    .isEqualTo(Long.MAX_VALUE);

            replica.replication().primaryArchived(primary.replication().archivedFloor());
            replica.truncateBefore(replica.flushedLsn());

            assertThat(replica.status().segments().get(0).startLsn())
                    .isEqualTo(replica.flushedLsn() / SMALL_SEGMENT * SMALL_SEGMENT);
        }
    }

    @Test
    void retentionOnAReplicaNamesTheArchiveAsWhatHoldsItBack() throws Exception {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal replica = replicaWithAnArchive(primary,
                     TestLogs.small(work.resolve("replica")).retentionBytes(2 * SMALL_SEGMENT))) {
            fill(primary, replica);
            replica.replication().primaryArchived(4 * SMALL_SEGMENT);

            assertThat(Eventually.holds(() -> replica.status().segments().get(0).startLsn() == 4 * SMALL_SEGMENT
                    && replica.status().retention().heldBy().stream().anyMatch(h -> h.holder().equals("archive"))))
                    .as("retention removed up to the reported floor and says the archive holds the rest: %s",
                            replica.status().retention()).isTrue();
        }
    }

    @Test
    void aReplicasArchiveStatusShowsWhatItsPrimaryReportedArchived() throws Exception {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal replica = replicaWithAnArchive(primary, TestLogs.small(work.resolve("replica")))) {
            fill(primary, replica);
            ArchiverStatus archiver = replica.status().archiver().orElseThrow();

            replica.replication().primaryArchived(5 * SMALL_SEGMENT);

            assertThat(archiver.awaitArchived(5 * SMALL_SEGMENT, Duration.ofSeconds(10))).isTrue();
            assertThat(archiver.archivedLsn()).isLessThan(6 * SMALL_SEGMENT);
            assertThat(archiver.archivedSegments()).as("a replica uploads nothing").isZero();
        }
    }

    @Test
    void aLogThatStopsTakingAppendsForgetsWhatAnEarlierPrimaryReported() throws Exception {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal replica = replicaWithAnArchive(primary, TestLogs.small(work.resolve("replica")))) {
            fill(primary, replica);
            replica.replication().primaryArchived(Long.MAX_VALUE);
            replica.replication().promote();
            replica.append(new byte[100], Durability.LOCAL);

            replica.replication().refuseAppends(Replicas.REFUSAL); // demoted: its next primary has not said anything
            long oldest = replica.oldestLsn();
            replica.truncateBefore(replica.flushedLsn());

            assertThat(replica.oldestLsn()).isEqualTo(oldest);
        }
    }

    @Test
    void aReplicaPromotedWithoutSegmentsTheArchiveLacksKeepsItsArchivedLsnBelowTheGap() throws Exception {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal replica = replicaWithAnArchive(primary, TestLogs.small(work.resolve("replica")),
                     ArchiveConfig.builder(new FileArchiveTarget(archiveDir)).maxPendingBytes(2 * SMALL_SEGMENT))) {
            fill(primary, replica);
            Path first = replica.status().segments().get(0).path(); // the old primary archived segment 0, and no more
            Files.copy(first, archiveDir.resolve(ArchiveNames.segment(1, 0)));
            replica.replication().primaryArchived(3 * SMALL_SEGMENT); // as an older Walden's replica did, unreported
            replica.truncateBefore(replica.flushedLsn());

            replica.replication().promote();
            ArchiverStatus archiver = replica.status().archiver().orElseThrow();

            assertThat(Eventually.holds(() -> archiver.missing() != null)).isTrue();
            assertThat(archiver.missing().fromLsn()).isEqualTo(SMALL_SEGMENT);
            assertThat(archiver.missing().toLsn()).isEqualTo(3 * SMALL_SEGMENT);
            long sealed = replica.flushedLsn() / SMALL_SEGMENT * SMALL_SEGMENT;
            assertThat(Eventually.holds(() -> archiver.pendingSegments() == 0 && archiver.archivedSegments() > 0)).isTrue();
            assertThat(archiver.archivedLsn()).as("a restore stops at the gap, whatever was archived after it")
                    .isLessThanOrEqualTo(SMALL_SEGMENT).isLessThan(sealed);
            assertThat(archiver.lagBytes()).as("the gap is not pending: no upload can fill it")
                    .isLessThan(2 * SMALL_SEGMENT);
            assertThat(archiver.blocking()).as("a gap bigger than the cap blocks no append").isFalse();
            replica.append(new byte[100], Durability.LOCAL);
        }
        Path replicaDir = work.resolve("replica");
        try (Wal reopened = Wal.open(TestLogs.small(replicaDir).archive(ArchiveConfig.builder(new FileArchiveTarget(archiveDir))
                .build()).build())) {
            ArchiverStatus archiver = reopened.status().archiver().orElseThrow();
            assertThat(Eventually.holds(() -> archiver.missing() != null)).as("said again after a restart").isTrue();
            assertThat(archiver.missing().fromLsn()).isEqualTo(SMALL_SEGMENT);
        }
    }

    @Test
    void truncationNeverRemovesTheSegmentAReplicasReadLimitIsIn() {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal replica = Replicas.open(primary, work.resolve("replica"))) {
            long limit = 0;
            byte[] record = new byte[1000];
            while (primary.insertLsn() < SEGMENTS * SMALL_SEGMENT) {
                long lsn = primary.append(record, Durability.OFF);
                if (limit == 0 && lsn > 2 * SMALL_SEGMENT + SMALL_SEGMENT / 2) {
                    limit = lsn; // a record boundary in the third segment
                }
            }
            primary.flush();
            Replicas.copyWritten(primary, replica); // flushed on the replica, beyond what its primary reported
            replica.replication().raiseReadLimit(limit);
            replica.replication().primaryArchived(Long.MAX_VALUE);

            replica.truncateBefore(replica.flushedLsn());

            assertThat(replica.status().segments().get(0).startLsn()).isEqualTo(2 * SMALL_SEGMENT);
            replica.replication().rewindTo(limit); // what a rewind may ask for: the log still has it
            assertThat(replica.insertLsn()).isEqualTo(limit);
        }
    }
}
