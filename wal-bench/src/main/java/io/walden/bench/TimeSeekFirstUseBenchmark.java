package io.walden.bench;

import io.walden.core.Durability;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.file.Path;
import java.time.Instant;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The worst case of a seek by time ({@code Wal.lsnAt}): the first seek after the log was opened, on a log of about a
 * thousand segments, when no reader has read the segment that holds the answer yet, so the seek first builds that
 * segment's page index (one walk of its length words) besides its binary search over the segments' first records.
 * Each invocation reopens the log (outside the measurement), so every seek is a first one; the files stay in the page
 * cache, so this is the CPU's share (a cold cache adds the disk's read of one segment). Two shapes: 1,024 segments of
 * 1 MiB, and 16 of the default 64 MiB (the walk grows with the segment, the search with the count). Small records (64 B)
 * make the walk longest. Beside {@link TimeSeekBenchmark}, whose seeks reuse built indexes.
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, batchSize = 1)
@Measurement(iterations = 30, batchSize = 1)
@Fork(value = 1, jvmArgsAppend = {BenchFiles.JVM_FLAGS_1, BenchFiles.JVM_FLAGS_2, BenchFiles.JVM_FLAGS_3,
        BenchFiles.JVM_FLAGS_4, BenchFiles.JVM_FLAGS_5, BenchFiles.JVM_FLAGS_6, BenchFiles.JVM_FLAGS_7,
        BenchFiles.JVM_FLAGS_8, "-Xmx1g"})
public class TimeSeekFirstUseBenchmark {

    @State(Scope.Benchmark)
    public static class ReopenedLog {
        /** Segment size in bytes and how many: 1,024 × 1 MiB, or 16 × 64 MiB (the default size). */
        @Param({"1048576:1024", "67108864:16"})
        String shape;

        Path dir;
        WalConfig config;
        Wal wal;
        long spanMillis;
        final SplittableRandom random = new SplittableRandom(7);

        @Setup(Level.Trial)
        public void fill() throws InterruptedException {
            long segment = Long.parseLong(shape.split(":")[0]);
            int segments = Integer.parseInt(shape.split(":")[1]);
            dir = BenchFiles.newDir("time-seek-first");
            TimeSeekBenchmark.StepClock clock = new TimeSeekBenchmark.StepClock();
            config = WalConfig.builder(dir).segmentSize(segment).clock(clock).build();
            try (Wal filling = Wal.open(config)) {
                byte[] payload = new byte[64];
                for (long appended = 0; filling.status().segmentCount() < segments + 1; appended++) {
                    if (appended % 256 == 0) {
                        clock.now = clock.now.plusMillis(1);
                        Thread.sleep(0, 1); // lets the log's clock thread sample the stepped clock
                    }
                    filling.append(0, payload, Durability.OFF);
                }
                filling.flush();
                spanMillis = clock.now.toEpochMilli() - TimeSeekBenchmark.START.toEpochMilli();
            }
        }

        @Setup(Level.Invocation)
        public void reopen() {
            wal = Wal.open(config); // no segment's page index is built yet
        }

        @TearDown(Level.Invocation)
        public void close() {
            wal.close();
        }

        @TearDown(Level.Trial)
        public void delete() {
            BenchFiles.delete(dir);
        }

        Instant randomTime() {
            return TimeSeekBenchmark.START.plusMillis(random.nextLong(spanMillis));
        }
    }

    @Benchmark
    public long firstSeekAfterOpen(ReopenedLog log) {
        return log.wal.lsnAt(log.randomTime());
    }
}
