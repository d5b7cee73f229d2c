package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link NonWaitingAppends#flushWhenGathered}: an event loop puts its flush off, without blocking, until the commits
 * the log expects have asked for it, and is told when to ask again; a lone commit is flushed at once.
 */
@Timeout(60)
class GatheredFlushTest {
    @TempDir
    Path dir;

    /** The background writer stays asleep: only flushWhenGathered flushes here. */
    private Wal open() {
        return Wal.open(TestLogs.small(dir).writerDelay(Duration.ofSeconds(30)).offWriteDelay(Duration.ofSeconds(30)).build());
    }

    @Test
    void aLoneCommitIsFlushedAtOnceByTheCallingThread() {
        try (Wal wal = open()) {
            Told told = append(wal);
            assertThat(wal.nonWaiting().flushWhenGathered()).as("nothing left waiting").isZero();
            assertThat(told.lsn).as("told on this thread, before the call returned").isPositive();
            assertThat(wal.flushedLsn()).isGreaterThan(told.lsn);
        }
    }

    @Test
    void theFlushIsPutOffUntilAsManyCommitsAsRecentFlushesServedHaveAsked() {
        try (Wal wal = open()) {
            for (int round = 0; round < 3; round++) { // recent flushes served eight commits each
                List<Told> batch = appendMany(wal, 8);
                drain(wal);
                assertThat(batch).allSatisfy(t -> assertThat(t.lsn).isPositive());
            }
            long flushes = wal.status().flushCount();
            List<Told> first = appendMany(wal, 1);
            long again = wal.nonWaiting().flushWhenGathered();
            assertThat(again).as("ask again later: seven more are expected").isPositive()
                    .isLessThanOrEqualTo(TimeUnit.SECONDS.toNanos(1));
            assertThat(first.get(0).lsn).as("not flushed yet").isNegative();

            List<Told> rest = appendMany(wal, 7);
            assertThat(wal.nonWaiting().flushWhenGathered()).as("all eight asked: flushed, nothing left").isZero();
            assertThat(first.get(0).lsn).isPositive();
            assertThat(rest).allSatisfy(t -> assertThat(t.lsn).isPositive());
            assertThat(wal.status().flushCount()).as("one force for the eight").isEqualTo(flushes + 1);
        }
    }

    @Test
    void commitsWhoseSiblingsNeverComeAreFlushedOnceTheGatherEnds() throws Exception {
        try (Wal wal = open()) {
            for (int round = 0; round < 3; round++) {
                appendMany(wal, 8);
                drain(wal);
            }
            Told lonely = append(wal);
            long again = wal.nonWaiting().flushWhenGathered();
            assertThat(again).isPositive();
            while (again > 0) { // a sleep: the delay the log asked for, waited as an event loop's timer would
                TimeUnit.NANOSECONDS.sleep(again);
                again = wal.nonWaiting().flushWhenGathered();
            }
            assertThat(lonely.lsn).as("flushed without its expected siblings").isPositive();
            assertThat(wal.flushedLsn()).isGreaterThan(lonely.lsn);
        }
    }

    @Test
    void withNothingWaitingThereIsNothingToAskAgainFor() {
        try (Wal wal = open()) {
            wal.nonWaiting().tryAppendAsync(0, ByteBuffer.wrap(new byte[8]), Durability.OFF);
            assertThat(wal.nonWaiting().flushWhenGathered()).isZero();
        }
    }

    private static void drain(Wal wal) {
        for (long again = wal.nonWaiting().flushWhenGathered(); again > 0; again = wal.nonWaiting().flushWhenGathered()) {
            Thread.onSpinWait();
        }
    }

    private static List<Told> appendMany(Wal wal, int n) {
        List<Told> told = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            told.add(append(wal));
        }
        return told;
    }

    private static Told append(Wal wal) {
        Told told = new Told();
        assertThat(wal.nonWaiting().tryAppend(0, ByteBuffer.wrap(new byte[64]), Durability.LOCAL, told)).isTrue();
        return told;
    }

    /** Records what it was told; -1 until then. */
    private static final class Told extends AppendCompletion {
        volatile long lsn = -1;

        @Override
        protected void durable(long lsn) {
            this.lsn = lsn;
        }

        @Override
        protected void failed(Throwable cause) {
            throw new AssertionError(cause);
        }
    }
}
