package io.walden.core;

import io.walden.core.internal.segment.SegmentFiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * When a log prepares its next segment (docs/operations.md, "Named logs", Disk): once its insert position passes the
 * middle of its newest segment, so that a new or idle log holds one segment file, not two; from its first roll on, one
 * segment ahead at all times.
 */
class SegmentPrepareAheadTest {
    private static final int RECORD = 1000;

    @TempDir
    Path dir;

    @Test
    void aNewLogHoldsOneSegmentUntilItIsHalfWrittenThenPreparesTheNext() throws Exception {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            long half = TestLogs.SMALL_SEGMENT / 2;
            while (wal.insertLsn() + RECORD + 64 < half) {
                wal.append(new byte[RECORD], Durability.LOCAL);
            }
            // Not a wait for a condition: three turns of the preparer (100 ms apart) that must not prepare anything.
            Thread.sleep(300);
            assertThat(segmentFiles()).as("a log below the middle of its only segment").isEqualTo(1);

            wal.append(new byte[RECORD], Durability.LOCAL);
            wal.append(new byte[RECORD], Durability.LOCAL);
            assertThat(wal.insertLsn()).isGreaterThanOrEqualTo(half);
            waitUntil("the next segment prepared", () -> segmentFiles() == 2);
        }
    }

    @Test
    void aLogThatRolledKeepsTheSegmentAfterItsCurrentOnePrepared() throws Exception {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            long firstEnd = TestLogs.SMALL_SEGMENT;
            while (wal.insertLsn() < firstEnd) {
                wal.append(new byte[RECORD], Durability.LOCAL);
            }
            // Just past the roll, far below the middle of the new segment: the one after it is asked for at the roll.
            assertThat(wal.insertLsn()).isLessThan(firstEnd + TestLogs.SMALL_SEGMENT / 2);
            waitUntil("the segment after the current one prepared", () -> segmentFiles() == 3);
        }
    }

    private long segmentFiles() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(SegmentFiles.SUFFIX)).count();
        }
    }
}
