package io.walden.core;

import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.recovery.ControlFile;
import io.walden.core.internal.segment.SegmentFiles;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;

import static io.walden.core.TestLogs.SMALL_SEGMENT;
import static io.walden.core.TestLogs.bytes;
import static io.walden.core.TestLogs.string;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RecoveryTest {
    @TempDir
    Path dir;

    private final WalConfig.Builder config() {
        return TestLogs.small(dir).writerDelay(Duration.ofHours(1)).checkpointInterval(Duration.ofHours(1));
    }

    private LogFiles files() {
        return new LogFiles(dir, SMALL_SEGMENT);
    }

    /** Appends {@code n} records "r0".."r(n-1)", LOCAL, and returns their LSNs. With {@code crashLike}, the control
     *  file is put back as it was at open, as after a crash before the next checkpoint. */
    private List<Long> appendRecords(int n, boolean crashLike) {
        List<Long> lsns = new ArrayList<>();
        try (Wal wal = Wal.open(config().build())) {
            files().snapshotControl();
            for (int i = 0; i < n; i++) {
                lsns.add(wal.append(bytes("r" + i), Durability.LOCAL));
            }
        }
        if (crashLike) {
            files().restoreControl();
        }
        return lsns;
    }

    private void assertRecords(Wal wal, List<Long> lsns, int count) {
        try (WalReader r = wal.reader(wal.oldestLsn())) {
            for (int i = 0; i < count; i++) {
                WalRecord rec = r.next();
                assertThat(rec).as("record %d", i).isNotNull();
                assertThat(rec.lsn()).isEqualTo(lsns.get(i));
                assertThat(string(rec.payload())).isEqualTo("r" + i);
            }
            assertThat(r.next()).isNull();
        }
    }

    /** The space a record of "r0" to "r9999" takes: header, time and payload, aligned. */
    private static final long SMALL_RECORD = RecordDescriptor.aligned(RecordDescriptor.recordLength(5));

    @Test
    void shouldCutOffAGarbageTailAndKeepEverythingBeforeIt() {
        List<Long> lsns = appendRecords(100, false);
        long end;
        try (Wal wal = Wal.open(config().build())) {
            end = wal.insertLsn();
        }
        byte[] garbage = new byte[1000];
        new Random(42).nextBytes(garbage);
        files().write(end, garbage);

        try (Wal wal = Wal.open(config().build())) {
            RecoveryReport report = wal.status().recoveryReport();
            assertThat(report.endLsn()).isEqualTo(end);
            assertThat(report.bytesCutOff()).isGreaterThan(900);
            assertThat(report.firstBadLsn()).isEqualTo(end);
            assertRecords(wal, lsns, 100);
            wal.append(bytes("r100"), Durability.LOCAL);
            lsns.add(end);
        }
        try (Wal wal = Wal.open(config().build())) {
            assertThat(wal.status().recoveryReport().repaired()).as("the repair was durable: the second open is clean").isFalse();
            assertRecords(wal, lsns, 101);
        }
    }

    @Test
    void shouldEndTheLogAtAZeroedTail() {
        List<Long> lsns = appendRecords(100, true);
        // Up to and including the next record's prev link, which the last reserver filled in ahead of time.
        files().zero(lsns.get(97), (int) (lsns.get(99) - lsns.get(97)) + 48);

        try (Wal wal = Wal.open(config().build())) {
            assertThat(wal.status().recoveryReport().endLsn()).isEqualTo(lsns.get(97));
            assertThat(wal.status().recoveryReport().reason()).isEqualTo("clean end");
            assertRecords(wal, lsns, 97);
        }
    }

    @Test
    void shouldCutATornRecordWhoseLengthWasNeverWritten() {
        List<Long> lsns = appendRecords(100, true);
        files().zero(lsns.get(99), 4);

        try (Wal wal = Wal.open(config().build())) {
            RecoveryReport report = wal.status().recoveryReport();
            assertThat(report.endLsn()).isEqualTo(lsns.get(99));
            assertThat(report.reason()).contains("torn record");
            assertThat(report.bytesCutOff()).isGreaterThan(0);
            assertRecords(wal, lsns, 99);
        }
    }

    @Test
    void shouldCutATornTailWithACrcMismatchPastTheLastCheckpoint() {
        List<Long> lsns = appendRecords(100, true);
        files().flipBit(lsns.get(98) + 26, 3);

        try (Wal wal = Wal.open(config().build())) {
            RecoveryReport report = wal.status().recoveryReport();
            assertThat(report.endLsn()).isEqualTo(lsns.get(98));
            assertThat(report.reason()).contains("CRC-32C mismatch");
            assertRecords(wal, lsns, 98);
        }
    }

    @Test
    void shouldRefuseToOpenWhenARecordBelowTheFlushPointIsCorrupt() {
        List<Long> lsns = appendRecords(100, false);
        long bad = lsns.get(50);
        files().flipBit(bad + 25, 0);

        assertThatThrownBy(() -> Wal.open(config().build()))
                .isInstanceOf(WalCorruptedException.class)
                .hasMessageContaining(Lsn.format(bad))
                .hasMessageContaining(SegmentFiles.name(bad & -SMALL_SEGMENT))
                .hasMessageContaining("corruption")
                .satisfies(e -> assertThat(((WalCorruptedException) e).lsn()).isEqualTo(bad));
        // Nothing was changed: the records after the bad one are still on disk.
        assertThat(string(files().read(lsns.get(99) + RecordDescriptor.TIMED_HEADER_LENGTH, 3))).isEqualTo("r99");
    }

    @Test
    void shouldTruncateAtCorruptionOnlyWhenConfiguredTo() {
        List<Long> lsns = appendRecords(100, false);
        files().flipBit(lsns.get(50) + 25, 0);

        try (Wal wal = Wal.open(config().truncateAtCorruption(true).build())) {
            RecoveryReport report = wal.status().recoveryReport();
            assertThat(report.truncatedCorruption()).isTrue();
            assertThat(report.endLsn()).isEqualTo(lsns.get(50));
            assertRecords(wal, lsns, 50);
        }
        try (Wal wal = Wal.open(config().build())) {
            assertThat(wal.status().recoveryReport().repaired()).isFalse();
        }
    }

    @Test
    void shouldNeverAcceptStaleRecordsLeftInARecycledSegment() {
        // Records of one aligned size, so that record boundaries fall on the same offsets in every segment.
        List<Long> lsns = new ArrayList<>();
        try (Wal wal = Wal.open(config().build())) {
            files().snapshotControl();
            for (int i = 0; i < 3000; i++) {
                lsns.add(wal.append(bytes(String.format("r%039d", i)), Durability.LOCAL));
            }
        }
        files().restoreControl();
        long end = lsns.get(2999) + RecordDescriptor.aligned(RecordDescriptor.recordLength(40));
        long segment = end & -SMALL_SEGMENT;
        assertThat(segment).as("the log spans several segments").isGreaterThanOrEqualTo(2 * SMALL_SEGMENT);
        // What an unzeroed recycled segment would hold: an older segment's valid records at the same offsets.
        long offset = end - segment;
        byte[] stale = files().read(SMALL_SEGMENT + offset, (int) (SMALL_SEGMENT - offset));
        assertThat(stale[0]).as("a valid record starts there").isNotZero();
        files().write(end, stale);

        try (Wal wal = Wal.open(config().build())) {
            RecoveryReport report = wal.status().recoveryReport();
            assertThat(report.endLsn()).isEqualTo(end);
            assertThat(report.reason()).contains("previous-record link");
            try (WalReader r = wal.reader(lsns.get(2990))) {
                for (int i = 2990; i < 3000; i++) {
                    assertThat(r.next().lsn()).isEqualTo(lsns.get(i));
                }
                assertThat(r.next()).isNull();
            }
        }
    }

    @Test
    void shouldRefuseASegmentOfAnotherLog(@TempDir Path other) throws Exception {
        appendRecords(3000, false);
        try (Wal wal = Wal.open(TestLogs.small(other).build())) {
            for (int i = 0; i < 3000; i++) {
                wal.append(bytes("other " + i), Durability.OFF);
            }
        }
        String name = SegmentFiles.name(SMALL_SEGMENT);
        Files.copy(other.resolve(name), dir.resolve(name), StandardCopyOption.REPLACE_EXISTING);

        assertThatThrownBy(() -> Wal.open(config().build()))
                .isInstanceOf(WalCorruptedException.class)
                .hasMessageContaining(name)
                .hasMessageContaining("another log");
    }

    @Test
    void shouldRefuseALogWithAMissingSegmentInTheMiddle() throws Exception {
        appendRecords(5000, false);
        Files.delete(dir.resolve(SegmentFiles.name(SMALL_SEGMENT)));

        assertThatThrownBy(() -> Wal.open(config().build()))
                .isInstanceOf(WalCorruptedException.class)
                .hasMessageContaining(SegmentFiles.name(SMALL_SEGMENT) + " is missing");
    }

    @Test
    void shouldRefuseToOpenWhenTheLastFlushedSegmentIsMissing() throws Exception {
        List<Long> lsns = appendRecords(5000, false);
        long last = lsns.get(4999) & -SMALL_SEGMENT;
        Files.delete(dir.resolve(SegmentFiles.name(last)));
        for (long s = last + SMALL_SEGMENT; Files.exists(dir.resolve(SegmentFiles.name(s))); s += SMALL_SEGMENT) {
            Files.delete(dir.resolve(SegmentFiles.name(s)));
        }

        assertThatThrownBy(() -> Wal.open(config().build()))
                .isInstanceOf(WalCorruptedException.class)
                .hasMessageContaining("missing");
    }

    @Test
    void shouldRefuseToOpenWhenFlushedRecordsReadBackAsZeros() {
        List<Long> lsns = appendRecords(100, false);
        files().zero(lsns.get(90), (int) (lsns.get(99) - lsns.get(90)) + 48);

        assertThatThrownBy(() -> Wal.open(config().build()))
                .isInstanceOf(WalCorruptedException.class)
                .hasMessageContaining(Lsn.format(lsns.get(90)));
    }

    @Test
    void shouldTreatARecordThatBreaksTheFitRuleAsTheEnd() {
        List<Long> lsns = appendRecords(10, true);
        // A CRC-valid record ending 8 bytes before the segment's end: no room for a closing header after it.
        long at = lsns.get(9) + SMALL_RECORD;
        int length = (int) (SMALL_SEGMENT - 8 - (at & (SMALL_SEGMENT - 1)));
        ByteBuffer rec = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        rec.putInt(0, length).putLong(8, lsns.get(9));
        CRC32C crc = new CRC32C();
        crc.update(rec.array(), 8, length - 8);
        for (int i = 0; i < 4; i++) {
            crc.update(length >>> (8 * i));
        }
        rec.putInt(4, (int) crc.getValue());
        files().write(at, rec.array());

        try (Wal wal = Wal.open(config().build())) {
            assertThat(wal.status().recoveryReport().endLsn()).isEqualTo(at);
            assertThat(wal.status().recoveryReport().reason()).contains("impossible length");
            wal.append(bytes("after"), Durability.LOCAL);
        }
    }

    @Test
    void shouldRebuildAMissingControlFileFromTheSegments() {
        List<Long> lsns = appendRecords(3000, false);
        files().deleteControl();

        try (Wal wal = Wal.open(config().build())) {
            assertThat(wal.status().recoveryReport().rebuiltControlFile()).isTrue();
            assertThat(wal.status().recoveryReport().endLsn()).isEqualTo(lsns.get(2999) + SMALL_RECORD);
            assertRecords(wal, lsns, 3000);
        }
        assertThat(dir.resolve(ControlFile.NAME)).exists();
    }

    @Test
    void aLongRebuildScanReportsItsProgressEvery16Segments() throws Exception {
        try (Wal wal = Wal.open(config().build())) {
            for (int i = 0; i < 40 * 60; i++) { // about 40 segments of 64 KiB
                wal.append(new byte[1000], Durability.OFF);
            }
        }
        files().deleteControl();
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true));
        try (Wal wal = Wal.open(config().build())) {
            assertThat(wal.status().recoveryReport().segmentsScanned()).isGreaterThanOrEqualTo(32);
        } finally {
            System.setErr(err);
        }
        assertThat(captured.toString()).contains("Recovery: scanned 16 of").contains("Recovery: scanned 32 of");
    }

    @Test
    void shouldSurviveATornControlFileSlot() {
        List<Long> lsns = appendRecords(200, false);
        try (Wal wal = Wal.open(config().build())) {
            wal.append(bytes("r200"), Durability.LOCAL);
            lsns.add(wal.insertLsn() - SMALL_RECORD);
        }
        // Damage whichever slot was written last: the other still holds a valid, older checkpoint.
        for (int slot = 0; slot < 2; slot++) {
            Path control = dir.resolve(ControlFile.NAME);
            LogFiles.copy(control, dir.resolve("control.good"));
            try (var ch = FileChannel.open(control, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap(new byte[] {1, 2, 3, 4}), slot * 512L + 40);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            try (Wal wal = Wal.open(config().build())) {
                assertRecords(wal, lsns, 201);
            }
            LogFiles.copy(dir.resolve("control.good"), control);
        }
    }

    @Test
    void shouldStartTheFirstRecordOfANewLogAfterTheSegmentHeader() {
        try (Wal wal = Wal.open(config().build())) {
            assertThat(wal.status().recoveryReport().createdNewLog()).isTrue();
            assertThat(wal.append(bytes("first"))).isEqualTo(SegmentHeaderDescriptor.LENGTH);
            assertThat(wal.oldestLsn()).isEqualTo(SegmentHeaderDescriptor.LENGTH);
        }
    }
}
