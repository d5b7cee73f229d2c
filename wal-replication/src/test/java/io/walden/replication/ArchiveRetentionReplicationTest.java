package io.walden.replication;

import io.walden.core.Durability;
import io.walden.core.SegmentInfo;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.archive.ArchiveConfig;
import io.walden.core.archive.ArchiveNames;
import io.walden.core.archive.FileArchiveTarget;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.replica.ReplicaClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static io.walden.core.Eventually.waitUntil;
import static io.walden.replication.Replicas.SEGMENT;
import static io.walden.replication.Replicas.config;
import static io.walden.replication.Replicas.follow;
import static io.walden.replication.Replicas.serve;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A replica with retention keeps every segment its primary's archive does not hold yet, over real TCP (the Archived
 * frame, docs/replication-protocol.md), so that promoted after its primary died with uploads pending, it uploads them
 * and the archive has no gap (docs/replication.md, "Retention and the archive").
 */
@Execution(ExecutionMode.CONCURRENT) // beside the other test classes: it mostly waits on its replicas
@Timeout(90)
class ArchiveRetentionReplicationTest {
    private static final int SEGMENTS = 12;

    @TempDir
    Path work;

    /** The directory archive's store goes down: a file stands where its directory was. */
    private static void breakStore(Path archive) throws Exception {
        Files.delete(archive);
        Files.writeString(archive, "the store is down");
    }

    private static void repair(Path archive) throws Exception {
        Files.delete(archive);
        Files.createDirectory(archive);
    }

    private static WalConfig.Builder archived(WalConfig.Builder log, Path archive) throws Exception {
        return log.archive(ArchiveConfig.builder(new FileArchiveTarget(archive)).timeout(Duration.ZERO)
                .retry(Duration.ofMillis(20), Duration.ofMillis(100)).build());
    }

    private static void fill(Wal primary) {
        byte[] record = new byte[1000];
        while (primary.insertLsn() < SEGMENTS * SEGMENT) {
            primary.append(record, Durability.OFF);
        }
        primary.flush();
    }

    private static boolean heldByTheArchive(Wal wal) {
        return wal.status().retention().heldBy().stream().anyMatch(h -> h.holder().equals("archive"));
    }

    private static long oldestSegment(Wal wal) {
        return wal.status().segments().get(0).startLsn();
    }

    @Test
    void aReplicaKeepsWhatItsPrimaryCouldNotArchiveAndLetsGoOnceItIs() throws Exception {
        Path archive = work.resolve("archive");
        try (Wal primary = Wal.open(archived(config(work.resolve("p")), archive).build());
             ReplicationServer server = serve(primary);
             Wal replica = Wal.open(archived(config(work.resolve("r")), archive).retentionBytes(2 * SEGMENT)
                     .logId(primary.status().logId()).build());
             ReplicaClient client = follow(replica, server, "r")) {
            breakStore(archive);
            fill(primary);
            waitUntil(() -> replica.flushedLsn() >= primary.flushedLsn());
            waitUntil(() -> heldByTheArchive(replica)); // retention looked, and would have removed segments
            assertThat(oldestSegment(replica)).as("nothing the archive lacks was removed").isZero();

            repair(archive);
            waitUntil(() -> primary.status().archiver().orElseThrow().pendingSegments() == 0);
            waitUntil(() -> oldestSegment(replica) >= primary.flushedLsn() / SEGMENT * SEGMENT - 2 * SEGMENT);
        }
    }

    @Test
    void aReplicaPromotedAfterItsPrimaryDiedWithUploadsPendingArchivesThemAll() throws Exception {
        Path archive = work.resolve("archive");
        Path replicaDir = work.resolve("r");
        long logId = logIdOfAPrimaryThatDies(archive, replicaDir);
        repair(archive);
        try (Wal replica = Wal.open(archived(config(replicaDir), archive).retentionBytes(2 * SEGMENT).logId(logId).build())) {
            // Its primary is gone, and it restarted: it kept everything the archive lacks, retention or not.
            assertThat(oldestSegment(replica)).isZero();
            replica.replication().promote();
            long sealedEnd = replica.flushedLsn() / SEGMENT * SEGMENT;

            assertThat(replica.status().archiver().orElseThrow().awaitArchived(sealedEnd, Duration.ofSeconds(30))).isTrue();
            List<SegmentInfo> kept = replica.status().segments();
            for (long start = 0; start < sealedEnd; start += SEGMENT) {
                long s = start;
                assertThat(Files.exists(archive.resolve(ArchiveNames.segment(1, s)))
                        || Files.exists(archive.resolve(ArchiveNames.segment(2, s))))
                        .as("segment %x is in the archive", s).isTrue();
            }
            assertThat(kept).isNotEmpty();
        }
    }

    /** A primary that streams {@value #SEGMENTS} segments to a replica in {@code replicaDir}, then dies; its log id. */
    private long logIdOfAPrimaryThatDies(Path archive, Path replicaDir) throws Exception {
        try (Wal primary = Wal.open(archived(config(work.resolve("p")), archive).build());
             ReplicationServer server = serve(primary);
             Wal replica = Wal.open(archived(config(replicaDir), archive).retentionBytes(2 * SEGMENT)
                     .logId(primary.status().logId()).build());
             ReplicaClient client = follow(replica, server, "r")) {
            breakStore(archive);
            fill(primary);
            waitUntil(() -> replica.flushedLsn() >= primary.flushedLsn());
            waitUntil(() -> heldByTheArchive(replica));
            assertThat(oldestSegment(replica)).isZero();
            assertThat(primary.status().archiver().orElseThrow().archivedSegments()).isZero();
            return primary.status().logId();
        }
    }
}
