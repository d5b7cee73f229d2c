package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Applications interrupt their threads (a pool's shutdownNow, Future.cancel(true)). A committer that is interrupted
 * while it leads a flush must not close the segment's channel under everybody (a FileChannel closes itself on an
 * interrupt), which would fail the log for every other thread.
 */
class InterruptedCommitterTest {
    @TempDir
    Path dir;

    @Test
    void anInterruptedThreadCommitsDurablyAndTheLogStaysHealthyAndTheFlagIsKept() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            Thread.currentThread().interrupt();
            long lsn;
            try {
                lsn = wal.append("committed while interrupted".getBytes(), Durability.LOCAL);
            } finally {
                assertThat(Thread.interrupted()).as("the interrupt is the application's: kept").isTrue();
            }
            assertThat(wal.flushedLsn()).isGreaterThan(lsn);
            assertThat(wal.status().isFailed()).isFalse();
            long next = wal.append("and the next one, on a healthy log".getBytes(), Durability.LOCAL);
            assertThat(wal.flushedLsn()).isGreaterThan(next);
        }
    }

    @Test
    void truncationFromAnInterruptedThreadLeavesTheLogHealthy() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            for (int i = 0; i < 300; i++) {
                wal.append(new byte[1000], Durability.OFF);
            }
            wal.flush();
            Thread.currentThread().interrupt();
            try {
                wal.truncateBefore(wal.flushedLsn());
            } finally {
                Thread.interrupted();
            }
            assertThat(wal.status().isFailed()).isFalse();
            long lsn = wal.append("after".getBytes(), Durability.LOCAL);
            assertThat(wal.flushedLsn()).isGreaterThan(lsn);
        }
    }
}
