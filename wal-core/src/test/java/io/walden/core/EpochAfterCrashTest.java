package io.walden.core;

import io.walden.core.internal.recovery.HistoryFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What lets a primary ship records before it flushes them (docs/replication.md, "Shipping before the flush"): a log
 * knows whether it was closed cleanly, and one opened after a crash can begin a new epoch at its recovered end, so
 * that any replica holding bytes beyond that end can tell they are not this log's.
 */
@Execution(ExecutionMode.CONCURRENT) // beside the other test classes: it mostly waits on the children it kills
class EpochAfterCrashTest {
    @TempDir
    Path work;

    /** Runs {@link CrashingAppender} in a child JVM and kills it with SIGKILL once it acknowledged some appends. */
    private void crash(Path log) throws Exception {
        try (ChildJvm child = ChildJvm.start(CrashingAppender.class, work.resolve("child.err"), log.toString(), "2",
                String.valueOf(TestLogs.SMALL_SEGMENT))) {
            assertThat(child.awaitReady(60, TimeUnit.SECONDS)).as("child started").isTrue();
            Eventually.holds(() -> child.lines().size() >= 50);
            child.kill();
            assertThat(child.lines()).hasSizeGreaterThanOrEqualTo(50);
        }
    }

    @Test
    void aLogClosedCleanlyReopensKnowingItAndMayShipUnflushedRecords() {
        Path log = work.resolve("log");
        try (Wal wal = Wal.open(TestLogs.small(log).build())) {
            wal.append(TestLogs.bytes("one"), Durability.LOCAL);
        }
        try (Wal wal = Wal.open(TestLogs.small(log).newEpochAfterCrash(true).build())) {
            assertThat(wal.status().recoveryReport().shutDownCleanly()).isTrue();
            assertThat(wal.status().epoch()).as("no crash, no new epoch").isEqualTo(1);
            assertThat(wal.replication().mayShipUnflushed()).isTrue();
        }
    }

    @Test
    void aLogWhoseProcessWasKilledBeginsANewEpochAtItsRecoveredEndDurablyBeforeAnyAppend() throws Exception {
        Path log = work.resolve("log");
        crash(log);
        long end;
        try (Wal wal = Wal.open(TestLogs.small(log).newEpochAfterCrash(true).build())) {
            assertThat(wal.status().recoveryReport().shutDownCleanly()).isFalse();
            end = wal.insertLsn();
            assertThat(wal.status().epoch()).isEqualTo(2);
            assertThat(wal.status().history().epochs()).containsExactly(new Epoch(1, 0), new Epoch(2, end));
            assertThat(wal.replication().mayShipUnflushed()).isTrue();
            assertThat(wal.append(TestLogs.bytes("after the crash"), Durability.LOCAL)).isEqualTo(end);
        }
        assertThat(HistoryFile.read(log).epochs()).containsExactly(new Epoch(1, 0), new Epoch(2, end));
    }

    @Test
    void aLogOpenedAfterACrashWithoutANewEpochMayShipOnlyFlushedRecords() throws Exception {
        Path log = work.resolve("log");
        crash(log);
        try (Wal wal = Wal.open(TestLogs.small(log).build())) {
            assertThat(wal.status().recoveryReport().shutDownCleanly()).isFalse();
            assertThat(wal.status().epoch()).isEqualTo(1);
            assertThat(wal.replication().mayShipUnflushed()).as("a replica may hold records this log lost").isFalse();
        }
        try (Wal wal = Wal.open(TestLogs.small(log).build())) {
            assertThat(wal.status().recoveryReport().shutDownCleanly()).as("the clean close above counts").isTrue();
        }
    }

    @Test
    void aLogClosedWithUnflushedOffRecordsFlushesThemAndIsMarkedShutDownCleanly() {
        Path log = work.resolve("log");
        try (Wal wal = Wal.open(TestLogs.small(log).build())) {
            for (int i = 0; i < 1000; i++) {
                wal.append(TestLogs.bytes("off " + i), Durability.OFF);
            }
        }
        try (Wal wal = Wal.open(TestLogs.small(log).build())) {
            assertThat(wal.status().recoveryReport().shutDownCleanly()).as("close flushes OFF records first").isTrue();
            int n = 0;
            try (WalReader r = wal.reader(wal.oldestLsn())) {
                while (r.next() != null) {
                    n++;
                }
            }
            assertThat(n).isEqualTo(1000);
        }
    }
}
