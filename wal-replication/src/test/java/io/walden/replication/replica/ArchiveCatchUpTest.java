package io.walden.replication.replica;

import com.sun.management.ThreadMXBean;
import io.walden.core.Durability;
import io.walden.core.ReplicationChunk;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.WalReader;
import io.walden.core.WalRecord;
import io.walden.core.archive.ArchiveNames;
import io.walden.core.archive.FileArchiveTarget;
import io.walden.core.internal.recovery.HistoryFile;
import io.walden.core.internal.segment.SegmentFiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A replica fetching from the archive what its primary no longer keeps ({@link ArchiveCatchUp}): whole segments of any
 * size are applied in bounded chunks of whole records, byte for byte.
 */
class ArchiveCatchUpTest {
    /** Larger than the default chunk several times over, so that a whole-segment read would show. */
    private static final long SEGMENT = 8L << 20;

    @TempDir
    Path work;

    /** A primary whose first segment is sealed, copied into a directory archive as the archiver names it. */
    private Wal primaryWithArchivedFirstSegment(FileArchiveTarget archive) throws Exception {
        Wal primary = Wal.open(WalConfig.builder(work.resolve("primary")).segmentSize(SEGMENT).build());
        byte[] payload = new byte[3000];
        for (int i = 0; primary.insertLsn() < SEGMENT + SEGMENT / 2; i++) {
            Arrays.fill(payload, (byte) i);
            primary.append(payload, Durability.OFF);
        }
        primary.flush();
        Path first = work.resolve("primary").resolve(SegmentFiles.name(0));
        archive.put(ArchiveNames.segment(1, 0), first, Files.size(first));
        return primary;
    }

    private Wal newReplica(Wal primary) {
        Wal replica = Wal.open(WalConfig.builder(work.resolve("replica")).segmentSize(SEGMENT)
                .logId(primary.status().logId()).build());
        replica.replication().refuseAppends("a replica of the primary");
        return replica;
    }

    @Test
    void aSegmentLargerThanAChunkIsAppliedWholeAndByteForByte() throws Exception {
        try (FileArchiveTarget archive = new FileArchiveTarget(work.resolve("archive"));
             Wal primary = primaryWithArchivedFirstSegment(archive);
             Wal replica = newReplica(primary)) {
            long applied = new ArchiveCatchUp(replica, archive, 64 << 10).run();

            assertThat(replica.insertLsn()).as("the whole sealed segment, then the next one's header").isEqualTo(SEGMENT + 64);
            assertThat(applied).isEqualTo(SEGMENT - 64);
            assertThat(Files.mismatch(work.resolve("primary").resolve(SegmentFiles.name(0)),
                    work.resolve("replica").resolve(SegmentFiles.name(0)))).isEqualTo(-1L);
            int records = 0;
            try (WalReader r = replica.reader(replica.oldestLsn())) {
                for (WalRecord rec; (rec = r.next()) != null; records++) {
                    assertThat(rec.payload()[0]).isEqualTo((byte) records);
                }
            }
            assertThat(records).as("every record of the segment, readable").isGreaterThan(2000);
        }
    }

    private static byte[] payload(char kind, int i) {
        byte[] p = new byte[1000];
        Arrays.fill(p, (byte) kind);
        p[0] = (byte) i;
        return p;
    }

    /** Copies what {@code from} wrote from {@code to}'s end on, as streaming would. */
    private static void copyWritten(Wal from, Wal to) {
        long position = to.insertLsn();
        for (ReplicationChunk c; (c = from.replication().readWritten(position, 8192)) != null; ) {
            position = to.replication().writeReceived(c.startLsn(), c.bytes());
        }
        to.flush();
    }

    /**
     * A replica that never heard of a promotion catches up from an archive that holds both the old primary's late copy of
     * the segment where the new epoch began and the new primary's: it adopts the archive's newer history and takes the
     * new primary's records, never the old one's past the epoch's start.
     */
    @Test
    void aReplicaBehindAPromotionFollowsTheArchivesNewerHistoryNotTheOldPrimarysLateCopy() throws Exception {
        long small = 64 << 10;
        try (FileArchiveTarget archive = new FileArchiveTarget(work.resolve("archive"));
             Wal a = Wal.open(WalConfig.builder(work.resolve("a")).segmentSize(small).build());
             Wal b = Wal.open(WalConfig.builder(work.resolve("b")).segmentSize(small).logId(a.status().logId()).build());
             Wal c = Wal.open(WalConfig.builder(work.resolve("c")).segmentSize(small).logId(a.status().logId()).build())) {
            b.replication().refuseAppends("a replica of a");
            c.replication().refuseAppends("a replica that fell behind");
            for (int i = 0; i < 80; i++) {
                a.append(payload('R', i), Durability.OFF);
            }
            a.flush();
            copyWritten(a, b);
            for (int i = 0; i < 60; i++) {
                a.append(payload('X', i), Durability.OFF); // never reached b
            }
            a.flush();
            b.replication().promote();
            for (int i = 0; i < 60; i++) {
                b.append(payload('B', i), Durability.OFF);
            }
            b.flush();
            archive.put(ArchiveNames.segment(1, 0), work.resolve("a").resolve(SegmentFiles.name(0)), small);
            archive.put(ArchiveNames.segment(1, small), work.resolve("a").resolve(SegmentFiles.name(small)), small);
            archive.put(ArchiveNames.segment(2, small), work.resolve("b").resolve(SegmentFiles.name(small)), small);
            Path history = work.resolve("history");
            Files.write(history, HistoryFile.format(b.status().history(), false));
            archive.put(ArchiveNames.history(2), history, Files.size(history));

            new ArchiveCatchUp(c, archive).run();

            assertThat(c.status().history()).as("adopted before applying").isEqualTo(b.status().history());
            c.replication().raiseReadLimit(c.insertLsn());
            StringBuilder kinds = new StringBuilder();
            try (WalReader r = c.reader(c.oldestLsn())) {
                for (WalRecord rec; (rec = r.next()) != null; ) {
                    kinds.append((char) rec.payload()[1]);
                }
            }
            assertThat(kinds.toString()).startsWith("R".repeat(80)).doesNotContain("X").contains("B");
        }
    }

    @Test
    void catchingUpASegmentTakesAChunkOfHeapNotTheSegment() throws Exception {
        try (FileArchiveTarget archive = new FileArchiveTarget(work.resolve("archive"));
             Wal primary = primaryWithArchivedFirstSegment(archive);
             Wal replica = newReplica(primary)) {
            ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
            long before = threads.getCurrentThreadAllocatedBytes();
            new ArchiveCatchUp(replica, archive).run();
            long allocated = threads.getCurrentThreadAllocatedBytes() - before;

            assertThat(replica.insertLsn()).isEqualTo(SEGMENT + 64);
            assertThat(allocated).as("heap bytes allocated to apply an 8 MiB segment").isLessThan(SEGMENT / 4);
        }
    }
}
