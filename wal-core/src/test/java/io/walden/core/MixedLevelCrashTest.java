package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A child JVM appends at every durability level while a reader at WRITTEN visibility tails the log, and is killed
 * (SIGKILL) at random moments, over and over on one log. After each kill: every record whose durable append
 * returned is there; every OFF record appended 50 ms before a line that said so is there (OFF records reach the
 * file within offWriteDelay, so the process's death cannot lose them); every record the WRITTEN reader saw is
 * there with the same bytes (a reader never sees what recovery would not return); nothing read fails its check.
 * The WAL buffers are a quarter of a segment, so that records keep running past the ring's end into its slack
 * (CrashRecoveryTest covers a ring as large as a segment).
 */
@Execution(ExecutionMode.CONCURRENT) // beside the other test classes: it mostly waits on the children it kills
class MixedLevelCrashTest {
    private static final long SEGMENT = 256 << 10;
    private static final long WAL_BUFFERS = 64 << 10;

    @TempDir
    Path dir;

    @Test
    void shouldKeepEveryRecordThatWasAcknowledgedOrWrittenOrSeenAcrossKills() throws Exception {
        int iterations = Integer.getInteger("walden.crash.iterations", 8);
        Random random = new Random();
        Path log = dir.resolve("log");
        Map<Long, long[]> mustSurvive = new HashMap<>(); // lsn -> {type, seq}
        long offSettled = 0;
        long read = 0;
        for (int i = 0; i < iterations; i++) {
            Map<Long, long[]> offAppended = new HashMap<>();
            long settledThisRun = -1;
            try (ChildJvm child = ChildJvm.start(MixedLevelAppender.class, dir.resolve("child.err"), log.toString(),
                    String.valueOf(SEGMENT), String.valueOf(WAL_BUFFERS))) {
                assertThat(child.awaitReady(60, TimeUnit.SECONDS)).as("child started").isTrue();
                child.killWithin(random, 200, 1000);
                for (String line : child.lines()) {
                    String[] f = line.split(" ");
                    assertThat(f[0]).as("the WRITTEN reader saw a record that fails its check: %s", line).isNotEqualTo("BAD");
                    if (f[0].equals("A")) {
                        long[] rec = {Long.parseLong(f[1]), Long.parseLong(f[2])};
                        if (rec[0] == Durability.OFF.ordinal() + 1) {
                            offAppended.put(Long.parseLong(f[3]), rec);
                        } else {
                            mustSurvive.put(Long.parseLong(f[3]), rec);
                        }
                    } else if (f[0].equals("S")) {
                        settledThisRun = Math.max(settledThisRun, Long.parseLong(f[1]));
                    } else if (f[0].equals("R")) {
                        mustSurvive.put(Long.parseLong(f[3]), new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])});
                        read++;
                    }
                }
            }
            for (Map.Entry<Long, long[]> off : offAppended.entrySet()) {
                if (off.getKey() <= settledThisRun) {
                    mustSurvive.put(off.getKey(), off.getValue());
                    offSettled++;
                }
            }
            verify(log, mustSurvive);
        }
        assertThat(offSettled).as("OFF records checked").isPositive();
        assertThat(read).as("records the WRITTEN reader saw").isPositive();
    }

    private static void verify(Path log, Map<Long, long[]> mustSurvive) {
        try (Wal wal = Wal.open(WalConfig.builder(log).segmentSize(SEGMENT).build())) {
            int found = 0;
            try (WalReader r = wal.reader(wal.oldestLsn())) {
                for (WalRecord rec; (rec = r.next()) != null; ) {
                    long seq = rec.payloadView().order(ByteOrder.BIG_ENDIAN).getLong(0);
                    assertThat(rec.payload()).as("record %s", Lsn.format(rec.lsn())).isEqualTo(CrashingAppender.payload(rec.type(), seq));
                    long[] expected = mustSurvive.get(rec.lsn());
                    if (expected != null) {
                        assertThat(new long[] {rec.type(), seq}).as("record at %s", Lsn.format(rec.lsn())).isEqualTo(expected);
                        found++;
                    }
                }
            }
            assertThat(found).as("every record that must survive is there (recovery: %s)", wal.status().recoveryReport())
                    .isEqualTo(mustSurvive.size());
        }
    }
}
