package io.walden.bench;

import io.walden.core.Durability;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.WalReader;
import io.walden.core.WalRecord;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
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
import org.openjdk.jmh.infra.Blackhole;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Reading a log from its start to its end (a consumer catching up, a replica's applier, a restore's check): one scan
 * of {@value #RECORDS} flushed records per operation, each record's CRC checked and its payload handed over, against
 * the peer, a Chronicle Queue tailer reading the same payloads. The log is in the page cache: this is the reader's
 * cost, not the disk's. Run with {@code -prof gc} to see what a scan allocates (a reader; a view per record).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {BenchFiles.JVM_FLAGS_1, BenchFiles.JVM_FLAGS_2, BenchFiles.JVM_FLAGS_3,
        BenchFiles.JVM_FLAGS_4, BenchFiles.JVM_FLAGS_5, BenchFiles.JVM_FLAGS_6, BenchFiles.JVM_FLAGS_7,
        BenchFiles.JVM_FLAGS_8, "-Xmx1g"})
public class ReadBenchmark {
    static final int RECORDS = 100_000;

    @State(Scope.Benchmark)
    public static class WaldenLog {
        @Param({"200"})
        public int payloadSize;
        Path dir;
        Wal wal;

        @Setup(Level.Trial)
        public void fill() {
            dir = BenchFiles.newDir("read-walden");
            wal = Wal.open(WalConfig.builder(dir).segmentSize(64L << 20).build());
            byte[] payload = new byte[payloadSize];
            for (int i = 0; i < RECORDS; i++) {
                payload[0] = (byte) i;
                wal.append(payload, Durability.OFF);
            }
            wal.flush();
        }

        @TearDown(Level.Trial)
        public void close() {
            wal.close();
            BenchFiles.delete(dir);
        }
    }

    @State(Scope.Benchmark)
    public static class ChronicleQueuePeer {
        @Param({"200"})
        public int payloadSize;
        Path dir;
        ChronicleQueue queue;

        @Setup(Level.Trial)
        public void fill() {
            dir = BenchFiles.newDir("read-chronicle");
            queue = SingleChronicleQueueBuilder.single(dir.toFile()).build();
            byte[] payload = new byte[payloadSize];
            try (ExcerptAppender appender = queue.createAppender()) {
                for (int i = 0; i < RECORDS; i++) {
                    payload[0] = (byte) i;
                    appender.writeBytes(b -> b.write(payload));
                }
            }
        }

        @TearDown(Level.Trial)
        public void close() {
            queue.close();
            BenchFiles.delete(dir);
        }
    }

    /** One scan of the whole log; returns the records read (always RECORDS). */
    @Benchmark
    public int waldenScan(WaldenLog log, Blackhole sink) {
        int n = 0;
        try (WalReader reader = log.wal.reader(log.wal.oldestLsn())) {
            WalRecord r;
            while ((r = reader.next()) != null) {
                sink.consume(r.payloadView().get(0)); // the bytes in the mapping, no copy
                n++;
            }
        }
        if (n != RECORDS) {
            throw new IllegalStateException("read " + n + " records, not " + RECORDS);
        }
        return n;
    }

    @Benchmark
    public int chronicleQueueScan(ChronicleQueuePeer peer, Blackhole sink) {
        int n = 0;
        try (ExcerptTailer tailer = peer.queue.createTailer()) {
            Bytes<?> bytes = Bytes.allocateElasticOnHeap(peer.payloadSize);
            while (true) {
                bytes.clear();
                if (!tailer.readBytes(bytes)) {
                    break;
                }
                sink.consume(bytes.readByte(0));
                n++;
            }
        }
        if (n != RECORDS) {
            throw new IllegalStateException("read " + n + " records, not " + RECORDS);
        }
        return n;
    }
}
