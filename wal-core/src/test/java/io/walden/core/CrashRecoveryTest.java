package io.walden.core;

import io.walden.core.internal.recovery.LogInspector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A child JVM appending with LOCAL from several threads is killed (SIGKILL) at random moments, many times
 * over the same log; after each kill, recovery must return every record whose append had returned, intact
 * and in order, and nothing corrupt. Iterations: {@code -Dwalden.crash.iterations} (default 8; the
 * {@code soak} profile runs 200).
 */
@Execution(ExecutionMode.CONCURRENT) // beside the other test classes: it mostly waits on the children it kills
class CrashRecoveryTest {
    @TempDir
    Path dir;
    /** No record's time may precede the test (records carry the wall clock of their append). */
    private final Instant started = Instant.now().minusSeconds(1);

    @Test
    void shouldKeepEveryAcknowledgedRecordAcrossRepeatedKills() throws Exception {
        killRepeatedly(Integer.getInteger("walden.crash.iterations", 8), SyncMethod.FDATASYNC);
    }

    @Test
    void shouldKeepEveryAcknowledgedRecordAcrossRepeatedKillsWithOpenDatasync() throws Exception {
        killRepeatedly(Math.max(2, Integer.getInteger("walden.crash.iterations", 8) / 2), SyncMethod.OPEN_DATASYNC);
    }

    /**
     * Records stored compressed (zstd) come back intact after kills too, and none is handed out corrupt. Each run of
     * the child trains a zstd dictionary after its first samples, so most records are compressed with one, across
     * many segment rolls by concurrent appenders (docs/format.md, "zstd dictionaries"); the inspector holds each
     * segment to the rule that a copy of the dictionary precedes its records.
     */
    @Test
    void shouldKeepEveryAcknowledgedCompressedRecordAcrossRepeatedKills() throws Exception {
        killRepeatedly(Math.max(2, Integer.getInteger("walden.crash.iterations", 8) / 2), SyncMethod.FDATASYNC, Compression.ZSTD);
        long[] compressed = new long[1];
        long[] dictionaryCopies = new long[1];
        LogInspector.Result result = new LogInspector(dir.resolve("log"))
                .inspect(new LogInspector.Visitor() {
            @Override
            public boolean onRecord(LogInspector.RecordInfo r) {
                if (r.compression() == Compression.ZSTD) {
                    compressed[0]++;
                }
                if (r.control()) {
                    dictionaryCopies[0]++; // the child keeps no cursors: its control records are dictionaries
                }
                return true;
            }
        });
        assertThat(result.problem()).isNull();
        assertThat(compressed[0]).as("records stored compressed").isGreaterThan(10);
        assertThat(dictionaryCopies[0]).as("copies of zstd dictionaries").isGreaterThan(1);
    }

    /**
     * Retention removes segments while the child appends (a 256 KiB limit over 64 KiB segments: several removals a
     * second), so kills land in the middle of removals: the log still opens, every acknowledged record from its
     * oldest on is there, and nothing in between is missing (the reader walks every record from the oldest on).
     */
    @Test
    void shouldOpenWithNothingMissingAfterKillsDuringRetention() throws Exception {
        killRepeatedly(Math.max(2, Integer.getInteger("walden.crash.iterations", 8) / 2), SyncMethod.FDATASYNC,
                Compression.NONE, 4 * TestLogs.SMALL_SEGMENT);
        try (Wal wal = Wal.open(WalConfig.builder(dir.resolve("log")).segmentSize(TestLogs.SMALL_SEGMENT).build())) {
            assertThat(wal.oldestLsn()).as("retention removed segments while the children ran").isGreaterThan(TestLogs.SMALL_SEGMENT);
        }
    }

    private void killRepeatedly(int iterations, SyncMethod method) throws Exception {
        killRepeatedly(iterations, method, Compression.NONE);
    }

    private void killRepeatedly(int iterations, SyncMethod method, Compression compression) throws Exception {
        killRepeatedly(iterations, method, compression, 0);
    }

    private void killRepeatedly(int iterations, SyncMethod method, Compression compression, long retentionBytes)
            throws Exception {
        Random random = new Random();
        Map<Long, long[]> acknowledged = new HashMap<>(); // lsn -> {thread, seq}
        Path stderr = dir.resolve("child.err");
        Path log = dir.resolve("log");
        long totalAcked = 0;
        for (int i = 0; i < iterations; i++) {
            try (ChildJvm child = ChildJvm.start(CrashingAppender.class, stderr, log.toString(), "4",
                    String.valueOf(TestLogs.SMALL_SEGMENT), method.configName(), compression.configName(),
                    String.valueOf(retentionBytes))) {
                assertThat(child.awaitReady(60, TimeUnit.SECONDS)).as("child started (see %s)", stderr).isTrue();
                child.killWithin(random, 50, 750);
                for (String line : child.lines()) {
                    String[] f = line.split(" ");
                    if (f.length == 4 && f[0].equals("A")) {
                        acknowledged.put(Long.parseLong(f[3]), new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])});
                        totalAcked++;
                    }
                }
            }
            verify(log, acknowledged, compression != Compression.NONE);
        }
        assertThat(totalAcked).as("the children acknowledged appends before being killed").isGreaterThan(iterations * 10L);
    }

    private void verify(Path log, Map<Long, long[]> acknowledged, boolean compressible) {
        try (Wal wal = Wal.open(WalConfig.builder(log).segmentSize(TestLogs.SMALL_SEGMENT).build())) {
            Map<Long, Long> lastSeqOfThread = new HashMap<>();
            List<long[]> times = new ArrayList<>(); // {lsn, time in µs}, in LSN order
            int found = 0;
            long oldest = wal.oldestLsn();
            acknowledged.keySet().removeIf(lsn -> lsn < oldest); // removed by retention, if the child had any
            try (WalReader r = wal.reader(oldest)) {
                for (WalRecord rec; (rec = r.next()) != null; ) {
                    assertThat(rec.timestamp()).as("record %s has its time", Lsn.format(rec.lsn()))
                            .isBetween(started, Instant.now());
                    if (!times.isEmpty()) {
                        assertThat(rec.timeMicros()).as("times never decrease in LSN order, across kills too")
                                .isGreaterThanOrEqualTo(times.get(times.size() - 1)[1]);
                    }
                    times.add(new long[] {rec.lsn(), rec.timeMicros()});
                    long seq = rec.payloadView().order(ByteOrder.BIG_ENDIAN).getLong(0);
                    assertThat(rec.payload()).as("record %s", Lsn.format(rec.lsn()))
                            .isEqualTo(CrashingAppender.payload(rec.type(), seq, compressible));
                    Long last = lastSeqOfThread.put((long) rec.type(), seq);
                    if (last != null) {
                        assertThat(seq).as("thread %d's records stay in order", rec.type()).isGreaterThan(last);
                    }
                    long[] ack = acknowledged.get(rec.lsn());
                    if (ack != null) {
                        assertThat(new long[] {rec.type(), seq}).isEqualTo(ack);
                        found++;
                    }
                }
            }
            assertThat(found).as("every acknowledged record is there (recovery: %s)", wal.status().recoveryReport())
                    .isEqualTo(acknowledged.size());
            // The time index after recovery: each sampled record's time leads to the first record with that time.
            for (int i = 0; i < times.size(); i += Math.max(1, times.size() / 50)) {
                long t = times.get(i)[1];
                int first = i;
                while (first > 0 && times.get(first - 1)[1] >= t) {
                    first--;
                }
                // The log's own records (dictionary copies) have times too: a seek may land on one, and a reader
                // from there skips it, so what counts is the first application record read from the answer.
                long at = wal.lsnAt(RecordTime.ofMicros(t));
                assertThat(at).as("lsnAt(%s)", RecordTime.ofMicros(t)).isLessThanOrEqualTo(times.get(first)[0])
                        .isGreaterThan(first == 0 ? -1 : times.get(first - 1)[0]);
                try (WalReader fromThere = wal.reader(at)) {
                    assertThat(fromThere.next().lsn()).as("read from lsnAt(%s)", RecordTime.ofMicros(t))
                            .isEqualTo(times.get(first)[0]);
                }
            }
        }
    }
}
