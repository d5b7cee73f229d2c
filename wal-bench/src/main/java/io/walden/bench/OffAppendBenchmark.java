package io.walden.bench;

import io.walden.core.Durability;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.internal.segment.SegmentFiles;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
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

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * One thread appending at {@code OFF} (into the WAL buffers, no write or force on the caller's path) against the
 * peer, Chronicle Queue's appender writing the same bytes ({@code writeBytes}, its default sync mode).
 * Run with {@code -prof gc} to check that Walden's append allocates nothing.
 *
 * <p>This measures the cost of an append, not the disk: each iteration gets a fresh log whose 1 GiB first
 * segment is fully allocated before measuring starts, and an iteration fills less than half of it, as the peer's
 * daily cycle file is never rolled within a run (run.sh must not pass {@code -w}/{@code -r} longer than the
 * annotations' quarter second). Half, because a log prepares its next segment (1 GiB zero-filled and forced, on a
 * thread of its own) once its insert position passes the middle of the current one: an iteration that got there
 * would measure that preparation's CPU and disk beside the appends, and more of it the more bytes each record
 * takes, which is what format comparisons (format-cost.sh) must not mix in. An iteration that got there anyway (a
 * faster machine) says so at its end. Walden's background writer still forces the appended bytes every 200 ms during
 * the iteration. Sustained throughput, where preparing new segments makes a firehose of OFF appends disk-bandwidth
 * bound, is measured by {@link CommitLoad}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
// Quarter-second iterations: at 16 million appends of 96 bytes per second an iteration fills about 0.4 GB, less than
// half the 1 GiB segment, so no iteration measures the next segment's preparation (see the class comment).
@Warmup(iterations = 5, time = 250, timeUnit = TimeUnit.MILLISECONDS)
@Measurement(iterations = 5, time = 250, timeUnit = TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {BenchFiles.JVM_FLAGS_1, BenchFiles.JVM_FLAGS_2, BenchFiles.JVM_FLAGS_3,
        BenchFiles.JVM_FLAGS_4, BenchFiles.JVM_FLAGS_5, BenchFiles.JVM_FLAGS_6, BenchFiles.JVM_FLAGS_7,
        BenchFiles.JVM_FLAGS_8, "-Xmx1g"})
public class OffAppendBenchmark {
    static final long SEGMENT = 1L << 30;

    @State(Scope.Benchmark)
    public static class WaldenLog {
        @Param({"64"})
        public int payloadSize;
        @Param({"200"})
        public int writerDelayMs;
        Path dir;
        Wal wal;
        byte[] payload;

        @Setup(Level.Iteration)
        public void open() throws InterruptedException {
            dir = BenchFiles.newDir("off-walden");
            wal = Wal.open(WalConfig.builder(dir).segmentSize(SEGMENT).writerDelay(Duration.ofMillis(writerDelayMs)).build());
            payload = new byte[payloadSize];
        }

        @TearDown(Level.Iteration)
        public void close() {
            if (Files.exists(dir.resolve(SegmentFiles.name(SEGMENT)))) {
                System.err.printf("WARNING: an iteration passed the middle of its %d MiB segment: the next one was prepared "
                        + "while it measured (shorter iterations, -r, would leave it out)%n", SEGMENT >> 20);
            }
            wal.close();
            BenchFiles.delete(dir);
        }
    }

    @State(Scope.Benchmark)
    public static class ChronicleQueuePeer {
        @Param({"64"})
        public int payloadSize;
        Path dir;
        ChronicleQueue queue;
        ExcerptAppender appender;
        byte[] payload;

        @Setup(Level.Iteration)
        public void open() {
            dir = BenchFiles.newDir("off-chronicle");
            queue = SingleChronicleQueueBuilder.single(dir.toFile()).build();
            appender = queue.createAppender();
            payload = new byte[payloadSize];
        }

        @TearDown(Level.Iteration)
        public void close() {
            appender.close();
            queue.close();
            BenchFiles.delete(dir);
        }
    }

    @Benchmark
    public long waldenAppendOff(WaldenLog log) {
        return log.wal.append(log.payload, Durability.OFF);
    }

    @Benchmark
    public void chronicleQueueWriteBytes(ChronicleQueuePeer peer) {
        peer.appender.writeBytes(b -> b.write(peer.payload));
    }
}
