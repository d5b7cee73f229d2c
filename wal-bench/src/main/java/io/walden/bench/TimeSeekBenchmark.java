package io.walden.bench;

import io.walden.core.Durability;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.WalReader;
import io.walden.core.WalRecord;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Seek by time ({@code Wal.lsnAt}) on a log of {@value #SEGMENTS} segments of 64 KiB, against the only way there was
 * before records had times: a reader from the oldest record that stops at the first record whose time is recent
 * enough (a full scan up to the target, half the log on average). Each operation seeks a random time in the log's span;
 * the log is in the page cache, so this is the seek's cost, not the disk's. The fill steps the log's clock a
 * millisecond every 16 appends (the log samples it about once a real millisecond), so the log spans many distinct times.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {BenchFiles.JVM_FLAGS_1, BenchFiles.JVM_FLAGS_2, BenchFiles.JVM_FLAGS_3,
        BenchFiles.JVM_FLAGS_4, BenchFiles.JVM_FLAGS_5, BenchFiles.JVM_FLAGS_6, BenchFiles.JVM_FLAGS_7,
        BenchFiles.JVM_FLAGS_8, "-Xmx1g"})
public class TimeSeekBenchmark {
    static final int SEGMENTS = 1024;
    static final long SEGMENT = 64 << 10;
    static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

    /** A clock the fill steps forward. */
    static final class StepClock extends Clock {
        volatile Instant now = START;

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    @State(Scope.Benchmark)
    public static class TimedLog {
        Path dir;
        Wal wal;
        long spanMillis;
        final SplittableRandom random = new SplittableRandom(42);

        @Setup(Level.Trial)
        public void fill() throws InterruptedException {
            dir = BenchFiles.newDir("time-seek");
            StepClock clock = new StepClock();
            wal = Wal.open(WalConfig.builder(dir).segmentSize(SEGMENT).clock(clock).build());
            byte[] payload = new byte[200];
            int appended = 0;
            while (wal.status().segmentCount() < SEGMENTS + 1) {
                if (appended++ % 16 == 0) {
                    clock.now = clock.now.plusMillis(1);
                    Thread.sleep(0, 1); // a pause now and then lets the clock thread sample it
                }
                wal.append(0, payload, Durability.OFF);
            }
            wal.flush();
            spanMillis = clock.now.toEpochMilli() - START.toEpochMilli();
        }

        Instant randomTime() {
            return START.plusMillis(random.nextLong(spanMillis));
        }

        @TearDown(Level.Trial)
        public void close() {
            wal.close();
            BenchFiles.delete(dir);
        }
    }

    @Benchmark
    public long lsnAt(TimedLog log) {
        return log.wal.lsnAt(log.randomTime());
    }

    @Benchmark
    public long fullScan(TimedLog log) {
        long target = log.randomTime().toEpochMilli() * 1000;
        try (WalReader r = log.wal.reader(log.wal.oldestLsn())) {
            for (WalRecord rec; (rec = r.next()) != null; ) {
                if (rec.timeMicros() >= target) {
                    return rec.lsn();
                }
            }
        }
        return log.wal.insertLsn();
    }
}
