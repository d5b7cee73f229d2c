package io.walden.core.archive;

import io.walden.core.Durability;
import io.walden.core.Epoch;
import io.walden.core.Lsn;
import io.walden.core.TestLogs;
import io.walden.core.Wal;
import io.walden.core.WalCorruptedException;
import io.walden.core.WalReader;
import io.walden.core.WalRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static io.walden.core.TestLogs.SMALL_SEGMENT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ArchiveRestoreTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;
    @TempDir
    Path archiveDir;
    @TempDir
    Path restored;

    /** Appends records of varied sizes until {@code segments} segments are sealed and archived; returns (lsn, payload). */
    private List<Object[]> archivedLog(int records, Duration timeout) throws Exception {
        List<Object[]> appended = new ArrayList<>();
        ArchiveConfig archive = ArchiveConfig.builder(new FileArchiveTarget(archiveDir)).timeout(timeout).build();
        try (Wal wal = Wal.open(TestLogs.small(dir).archive(archive).build())) {
            for (int i = 0; i < records; i++) {
                byte[] p = TestLogs.payload(1, i, 3000);
                appended.add(new Object[]{wal.append(p, Durability.LOCAL), p});
            }
            long target = timeout.isZero() ? wal.flushedLsn() / SMALL_SEGMENT * SMALL_SEGMENT : wal.flushedLsn();
            assertThat(wal.status().archiver().orElseThrow().awaitArchived(target, WAIT)).isTrue();
        }
        return appended;
    }

    /** A record copied out of the log (a {@link WalRecord} is a view valid only while the log is open). */
    private record Read(long lsn, byte[] payload) {
    }

    private static List<Read> readAll(Path logDir) {
        List<Read> out = new ArrayList<>();
        try (Wal wal = Wal.open(TestLogs.small(logDir).build()); WalReader r = wal.reader(wal.oldestLsn())) {
            for (WalRecord rec = r.next(); rec != null; rec = r.next()) {
                out.add(new Read(rec.lsn(), rec.payload()));
            }
        }
        return out;
    }

    private static Restore.Listener quiet() {
        return (index, count, name, bytes) -> {
        };
    }

    @Test
    void restoresEveryArchivedRecordByteForByte() throws Exception {
        List<Object[]> appended = archivedLog(300, Duration.ofMillis(100));
        Restore.Result result = Restore.fromArchive(new FileArchiveTarget(archiveDir), restored, Long.MAX_VALUE, quiet());
        List<Read> records = readAll(restored);
        assertThat(records).hasSize(appended.size());
        for (int i = 0; i < records.size(); i++) {
            assertThat(records.get(i).lsn()).isEqualTo((long) appended.get(i)[0]);
            assertThat(records.get(i).payload()).isEqualTo((byte[]) appended.get(i)[1]);
        }
        assertThat(result.usedPartial()).as("the last records were only in the timeout's partial upload").isTrue();
        assertThat(result.records()).isEqualTo(appended.size());
    }

    @Test
    void untilAMiddleLsnRestoresExactlyTheRecordsBeforeIt() throws Exception {
        List<Object[]> appended = archivedLog(300, Duration.ZERO);
        long until = (long) appended.get(150)[0];
        Restore.fromArchive(new FileArchiveTarget(archiveDir), restored, until, quiet());
        List<Read> records = readAll(restored);
        assertThat(records).hasSize(150);
        assertThat(records.get(149).lsn()).isEqualTo((long) appended.get(149)[0]);
        assertThat(records.get(149).payload()).isEqualTo((byte[]) appended.get(149)[1]);
    }

    @Test
    void untilBetweenRecordsCutsAtTheRecordBoundaryBelowIt() throws Exception {
        List<Object[]> appended = archivedLog(300, Duration.ZERO);
        long inside = (long) appended.get(100)[0] + 20; // inside record 100: it does not end before until
        Restore.Result result = Restore.fromArchive(new FileArchiveTarget(archiveDir), restored, inside, quiet());
        List<Read> records = readAll(restored);
        assertThat(records).hasSize(100);
        assertThat(result.lastRecordLsn()).isEqualTo((long) appended.get(99)[0]);
        try (Wal wal = Wal.open(TestLogs.small(restored).build())) {
            long next = wal.append(TestLogs.bytes("after the restore"), Durability.LOCAL);
            assertThat(next).as("the next record goes where record 100 was").isEqualTo((long) appended.get(100)[0]);
        }
    }

    @Test
    void aDamagedArchivedRecordFailsTheRestoreNamingItsLsn() throws Exception {
        List<Object[]> appended = archivedLog(300, Duration.ZERO);
        long victim = (long) appended.get(5)[0];
        ArchiverTest.flip(archiveDir.resolve(ArchiveNames.segment(1, 0)), victim + 30);
        assertThatThrownBy(() -> Restore.fromArchive(new FileArchiveTarget(archiveDir), restored, Long.MAX_VALUE, quiet()))
                .isInstanceOf(WalCorruptedException.class)
                .hasMessageContaining(Lsn.format(victim));
    }

    @Test
    void aGapInTheArchiveEndsTheRestoreBeforeIt() throws Exception {
        archivedLog(300, Duration.ZERO);
        Files.delete(archiveDir.resolve(ArchiveNames.segment(1, 2 * SMALL_SEGMENT)));
        Restore.Result result = Restore.fromArchive(new FileArchiveTarget(archiveDir), restored, Long.MAX_VALUE, quiet());
        assertThat(result.endLsn()).isEqualTo(2 * SMALL_SEGMENT + 64);
        assertThat(result.gapAt()).isEqualTo(2 * SMALL_SEGMENT);
        assertThat(result.shortOf(Long.MAX_VALUE)).isTrue();
        assertThat(readAll(restored)).isNotEmpty();
    }

    @Test
    void consumerCursorsComeBackWithTheRecordsThatCarryTheirChanges() throws Exception {
        long committed;
        ArchiveConfig archive = ArchiveConfig.builder(new FileArchiveTarget(archiveDir)).timeout(Duration.ofMillis(100)).build();
        try (Wal wal = Wal.open(TestLogs.small(dir).archive(archive).build())) {
            long first = wal.append(TestLogs.bytes("event 0"), Durability.LOCAL);
            wal.cursors().create("billing", first);
            for (int i = 1; i < 100; i++) {
                wal.append(TestLogs.payload(4, i, 2000), Durability.LOCAL);
            }
            committed = wal.insertLsn();
            wal.cursors().commit("billing", committed);
            wal.append(TestLogs.bytes("after the commit"), Durability.LOCAL);
            assertThat(wal.status().archiver().orElseThrow().awaitArchived(wal.flushedLsn(), WAIT)).isTrue();
        }
        Restore.fromArchive(new FileArchiveTarget(archiveDir), restored, Long.MAX_VALUE, quiet());
        try (Wal wal = Wal.open(TestLogs.small(restored).build())) {
            assertThat(wal.cursors().position("billing")).isEqualTo(committed);
        }
    }

    @Test
    void aRestoredLogBeginsAnEpochOfItsOwnPastEveryEpochTheArchiveKnows() throws Exception {
        archivedLog(300, Duration.ZERO);
        Restore.Result result = Restore.fromArchive(new FileArchiveTarget(archiveDir), restored, Long.MAX_VALUE, quiet());
        assertThat(result.history().epochs()).containsExactly(new Epoch(1, 0), new Epoch(2, result.endLsn()));
        try (Wal wal = Wal.open(TestLogs.small(restored).build())) {
            assertThat(wal.status().history()).isEqualTo(result.history());
        }
    }

    @Test
    void anArchiveWrittenBeforeObjectsWereNamedByEpochRestoresAsBefore() throws Exception {
        List<Object[]> appended = archivedLog(300, Duration.ofMillis(100));
        try (var objects = Files.list(archiveDir)) {
            for (Path o : objects.toList()) { // 00000001XXXXXXXXXXXXXXXX.wal[.partial] -> XXXXXXXXXXXXXXXX.wal[.partial]
                Files.move(o, archiveDir.resolve(o.getFileName().toString().substring(8)));
            }
        }
        Restore.fromArchive(new FileArchiveTarget(archiveDir), restored, Long.MAX_VALUE, quiet());
        List<Read> records = readAll(restored);
        assertThat(records).hasSize(appended.size());
        assertThat(records.get(299).payload()).isEqualTo((byte[]) appended.get(299)[1]);
    }

    @Test
    void refusesToRestoreIntoADirectoryThatHoldsFiles() throws Exception {
        archivedLog(100, Duration.ZERO);
        Files.writeString(restored.resolve("something"), "x");
        assertThatThrownBy(() -> Restore.fromArchive(new FileArchiveTarget(archiveDir), restored, Long.MAX_VALUE, quiet()))
                .hasMessageContaining("not empty");
    }
}
