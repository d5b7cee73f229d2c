package io.walden.core;

import io.walden.core.internal.ReadStart;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.segment.Segment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.walden.core.TestLogs.bytes;
import static io.walden.core.TestLogs.string;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static io.walden.core.internal.PartsForTests.registry;

/** A read starts only where a record provably starts: never inside a payload, whatever that payload holds. */
class ReadStartTest {
    @TempDir
    Path dir;

    @Test
    void shouldRefuseAReaderStartedOnARecordForgedInsideAPayload() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            long before = wal.append(bytes("before"), Durability.LOCAL);
            long outer = wal.insertLsn();
            byte[] forged = ForgedRecords.record(before, 666, bytes("forged"));
            assertThat(wal.append(forged, Durability.LOCAL)).isEqualTo(outer);
            long inside = outer + RecordDescriptor.HEADER_LENGTH; // where the forged record starts
            assertThatThrownBy(() -> wal.reader(inside)).isInstanceOf(IllegalLsnException.class)
                    .hasMessageContaining("not a record boundary");
            assertThatThrownBy(() -> wal.reader(inside, WalReader.Visibility.WRITTEN)).isInstanceOf(IllegalLsnException.class);
            assertThatThrownBy(() -> wal.replication().readFlushed(inside, 1 << 20)).isInstanceOf(IllegalLsnException.class);
        }
    }

    @Test
    void shouldReportADamagedLengthWordAtAProvenBoundaryAsCorruptionWhenShipping() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            long first = wal.append(bytes("first"), Durability.LOCAL); // a segment's first record: a boundary by construction
            Segment seg = registry(wal.parts()).get(first);
            seg.writeInt(first - seg.startLsn(), 5); // no record is 5 bytes long
            assertThatThrownBy(() -> wal.replication().readFlushed(first, 1 << 20)).isInstanceOf(WalCorruptedException.class)
                    .hasMessageContaining(Lsn.format(first)).hasMessageContaining("impossible length word");
        }
    }

    @Test
    void shouldRefuseEveryOffsetInsideARecordAndAcceptEveryRecordStartAcrossManyPages() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            List<Long> lsns = new ArrayList<>();
            for (int i = 0; i < 400; i++) {
                lsns.add(wal.append(new byte[length(i)], Durability.OFF));
            }
            wal.flush();
            for (int i = 0; i < lsns.size(); i++) {
                long lsn = lsns.get(i);
                try (WalReader r = wal.reader(lsn)) {
                    assertThat(r.next().lsn()).isEqualTo(lsn);
                }
                long end = lsn + RecordDescriptor.aligned(RecordDescriptor.HEADER_LENGTH + length(i));
                for (long o = lsn + RecordDescriptor.ALIGNMENT; o < end; o += RecordDescriptor.ALIGNMENT) {
                    long at = o;
                    assertThatThrownBy(() -> wal.reader(at)).as("LSN %s", Lsn.format(at)).isInstanceOf(IllegalLsnException.class);
                }
            }
        }
    }

    @Test
    void shouldRefuseAReplicationReadFromTheLastBytesOfASegmentWithoutReadingPastIt() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            fillTwoSegments(wal);
            for (long back = 1; back <= 8; back++) {
                long at = TestLogs.SMALL_SEGMENT - back;
                assertThatThrownBy(() -> wal.replication().readFlushed(at, 1 << 16)).as("LSN %s", Lsn.format(at))
                        .isInstanceOf(IllegalLsnException.class);
            }
            assertThat(wal.replication().readFlushed(TestLogs.SMALL_SEGMENT, 1 << 16).startLsn()).isEqualTo(TestLogs.SMALL_SEGMENT + 64);
        }
    }


    @Test
    void shouldContinueAReplicationReadPastTheNextSegmentsHeaderWhenAChunkEndsItsSegment() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            fillTwoSegments(wal);
            long from = wal.oldestLsn();
            ReplicationChunk chunk;
            int chunks = 0;
            do { // 1 KiB at a time: the first segment takes several chunks, each continuing where the last one said
                chunk = wal.replication().readFlushed(from, 1 << 10);
                assertThat(chunk.startLsn()).isEqualTo(ReadStart.pastHeader(from, TestLogs.SMALL_SEGMENT));
                from = chunk.nextLsn();
                chunks++;
            } while (chunk.endLsn() < TestLogs.SMALL_SEGMENT);
            assertThat(chunks).isGreaterThan(1);
            assertThat(chunk.endLsn()).as("a chunk never spans segments").isEqualTo(TestLogs.SMALL_SEGMENT);
            assertThat(chunk.nextLsn()).as("the next segment's first record, past its header")
                    .isEqualTo(TestLogs.SMALL_SEGMENT + 64);
            assertThat(wal.replication().readFlushed(chunk.nextLsn(), 1 << 10).startLsn()).isEqualTo(chunk.nextLsn());
        }
    }
    /** Appends 1000-byte records until the insert position reaches the end of the second segment, and flushes them. */
    private static void fillTwoSegments(Wal wal) {
        while (wal.insertLsn() < 2 * TestLogs.SMALL_SEGMENT) {
            wal.append(new byte[1000], Durability.OFF);
        }
        wal.flush();
    }

    private static int length(int i) {
        return (i * 37) % 300;
    }

    @Test
    void shouldProveAStartBeyondTheWrittenPositionOnceTheRecordsBeforeItAreWritten() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            WalClaim claim = wal.claim(0, 16, new WalClaim()); // holds the written position below everything after it
            long after = wal.append(ForgedRecords.record(claim.lsn(), 9, bytes("inner")), Durability.OFF);
            assertThat(wal.writtenLsn()).isLessThanOrEqualTo(after);
            WalReader good = wal.reader(after, WalReader.Visibility.WRITTEN);
            WalReader inside = wal.reader(after + RecordDescriptor.HEADER_LENGTH, WalReader.Visibility.WRITTEN);
            assertThat(good.next()).as("nothing is written there yet").isNull();
            claim.commit(Durability.OFF);
            long deadline = System.nanoTime() + 10_000_000_000L; // OFF records reach the file within offWriteDelay
            while (wal.writtenLsn() <= after && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(good.next().lsn()).isEqualTo(after);
            assertThatThrownBy(inside::next).isInstanceOf(IllegalLsnException.class);
            good.close();
            inside.close();
        }
    }

    @Test
    void shouldTakeASegmentsStartAndTheInsertPositionAsStarts() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            long first = wal.append(bytes("first"), Durability.LOCAL);
            try (WalReader r = wal.reader(0)) {
                assertThat(r.next().lsn()).isEqualTo(first);
            }
            long end = wal.insertLsn();
            try (WalReader r = wal.reader(end)) {
                assertThat(r.next()).isNull();
                wal.append(bytes("next"), Durability.LOCAL);
                assertThat(string(r.next().payload())).isEqualTo("next");
            }
            fillTwoSegments(wal);
            try (WalReader r = wal.reader(TestLogs.SMALL_SEGMENT)) {
                assertThat(r.next().lsn()).isEqualTo(TestLogs.SMALL_SEGMENT + 64);
            }
            assertThatThrownBy(() -> wal.reader(TestLogs.SMALL_SEGMENT + 8)).as("inside a later segment's header")
                    .isInstanceOf(IllegalLsnException.class);
        }
    }
}
