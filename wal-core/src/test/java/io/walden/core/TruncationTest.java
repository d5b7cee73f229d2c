package io.walden.core;

import io.walden.core.internal.segment.SegmentFiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static io.walden.core.TestLogs.SMALL_SEGMENT;
import static io.walden.core.TestLogs.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static io.walden.core.internal.PartsForTests.preparer;

class TruncationTest {
    @TempDir
    Path dir;

    private static List<Long> fill(Wal wal, int n) {
        List<Long> lsns = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            lsns.add(wal.append(new byte[1000], Durability.OFF));
        }
        wal.flush();
        return lsns;
    }

    @Test
    void shouldRemoveWholeSegmentsBelowTheGivenLsnAndRefuseReadsThere() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            List<Long> lsns = fill(wal, 500);
            long cut = 5 * SMALL_SEGMENT + 100;
            wal.truncateBefore(cut);
            assertThat(wal.oldestLsn()).isEqualTo(5 * SMALL_SEGMENT + 64);
            assertThatThrownBy(() -> wal.reader(lsns.get(0)))
                    .isInstanceOf(LsnRemovedException.class)
                    .hasMessageContaining("already been removed")
                    .hasMessageContaining(Lsn.format(wal.oldestLsn()));
            try (WalReader r = wal.reader(wal.oldestLsn())) {
                assertThat(r.next()).isNotNull();
            }
        }
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            assertThat(wal.oldestLsn()).as("truncation survives reopen").isEqualTo(5 * SMALL_SEGMENT + 64);
        }
    }

    @Test
    void shouldRecycleTruncatedSegmentsInsteadOfCreatingNewOnes() throws Exception {
        try (Wal wal = Wal.open(TestLogs.small(dir).spareSegments(2).build())) {
            fill(wal, 400);
            wal.truncateBefore(wal.flushedLsn());
            Eventually.holds(() -> SegmentFiles.listWithSuffix(dir, SegmentFiles.SPARE_SUFFIX).size() >= 2);
            assertThat(SegmentFiles.listWithSuffix(dir, SegmentFiles.SPARE_SUFFIX)).hasSize(2);
            long recycledBefore = preparer(wal.parts()).recycledCount();
            fill(wal, 400);
            assertThat(preparer(wal.parts()).recycledCount()).isGreaterThan(recycledBefore);
            assertThat(SegmentFiles.list(dir).size()).isLessThanOrEqualTo(wal.status().segmentCount() + 2);
        }
    }

    @Test
    void shouldNeverTruncateUnflushedRecords() {
        try (Wal wal = Wal.open(TestLogs.small(dir).writerDelay(Duration.ofHours(1)).build())) {
            wal.append(new byte[10], Durability.LOCAL);
            long flushed = wal.flushedLsn();
            for (int i = 0; i < 300; i++) {
                wal.append(new byte[1000], Durability.OFF);
            }
            wal.truncateBefore(wal.insertLsn());
            assertThat(wal.oldestLsn()).isLessThanOrEqualTo(flushed);
        }
    }

    @Test
    void shouldLetAReaderFinishTheSegmentItIsInWhileItIsTruncated() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            List<Long> lsns = fill(wal, 300);
            try (WalReader r = wal.reader(lsns.get(0))) {
                assertThat(r.next().lsn()).isEqualTo(lsns.get(0));
                wal.truncateBefore(3 * SMALL_SEGMENT);
                int inFirstSegment = (int) lsns.stream().filter(l -> l < SMALL_SEGMENT).count();
                for (int i = 1; i < inFirstSegment; i++) {
                    assertThat(r.next().lsn()).isEqualTo(lsns.get(i));
                }
                assertThatThrownBy(r::next).as("the next segment is gone").isInstanceOf(LsnRemovedException.class);
            }
        }
    }

    @Test
    void shouldRefuseAppendsWithAClearErrorWhenAReaderAsksPastTheEnd() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            wal.append(bytes("x"));
            assertThatThrownBy(() -> wal.reader(wal.insertLsn() + 8)).isInstanceOf(IllegalLsnException.class)
                    .hasMessageContaining("beyond the end");
            long lsn = wal.append(bytes("abcdefgh"));
            assertThatThrownBy(() -> wal.reader(lsn + 8).next()).isInstanceOf(IllegalLsnException.class)
                    .hasMessageContaining("no record starts at");
        }
    }
}
