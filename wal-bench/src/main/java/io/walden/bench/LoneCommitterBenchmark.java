package io.walden.bench;

import io.walden.core.Durability;
import io.walden.core.SyncMethod;
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

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * One committer: a durable ({@code LOCAL}) Walden append against two physical floors on a preallocated
 * file: a raw {@code FileChannel} write of the same bytes plus {@code force(false)}, and a store of the same
 * bytes into a mapping plus {@code force(false)} (what any memory-mapped log pays: on ext4 here, forcing a
 * page dirtied through a mapping costs about twice forcing one dirtied by write()). Run with {@code -prof gc}
 * to check that the blocking append allocates nothing.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {BenchFiles.JVM_FLAGS_1, BenchFiles.JVM_FLAGS_2, BenchFiles.JVM_FLAGS_3,
        BenchFiles.JVM_FLAGS_4, BenchFiles.JVM_FLAGS_7, BenchFiles.JVM_FLAGS_8, "-Xmx1g"})
public class LoneCommitterBenchmark {
    private static final long FILE_SIZE = 256L << 20;

    @State(Scope.Thread)
    public static class WaldenLog {
        @Param({"64"})
        public int payloadSize;
        @Param({"FDATASYNC"})
        public SyncMethod syncMethod;
        Path dir;
        Wal wal;
        byte[] payload;

        @Setup(Level.Trial)
        public void open() {
            dir = BenchFiles.newDir("lone-walden");
            wal = Wal.open(WalConfig.builder(dir).syncMethod(syncMethod).build());
            payload = new byte[payloadSize];
        }

        @TearDown(Level.Trial)
        public void close() {
            wal.close();
            BenchFiles.delete(dir);
        }
    }

    @State(Scope.Thread)
    public static class RawFile {
        @Param({"64"})
        public int payloadSize;
        Path dir;
        FileChannel channel;
        ByteBuffer buffer;
        long position;

        @Setup(Level.Trial)
        public void open() throws IOException {
            dir = BenchFiles.newDir("lone-raw");
            channel = RawForceLoop.preallocated(dir.resolve("raw.dat"), FILE_SIZE);
            buffer = ByteBuffer.allocateDirect(payloadSize);
        }

        @TearDown(Level.Trial)
        public void close() throws IOException {
            channel.close();
            BenchFiles.delete(dir);
        }
    }

    @State(Scope.Thread)
    public static class RawMapping {
        @Param({"64"})
        public int payloadSize;
        Path dir;
        FileChannel channel;
        MappedByteBuffer map;
        byte[] record;
        int position;

        @Setup(Level.Trial)
        public void open() throws IOException {
            dir = BenchFiles.newDir("lone-mmap");
            channel = RawForceLoop.preallocated(dir.resolve("raw.dat"), FILE_SIZE);
            map = channel.map(FileChannel.MapMode.READ_WRITE, 0, FILE_SIZE);
            record = new byte[payloadSize + 24];
        }

        @TearDown(Level.Trial)
        public void close() throws IOException {
            channel.close();
            BenchFiles.delete(dir);
        }
    }

    @Benchmark
    public long waldenAppendLocal(WaldenLog log) {
        return log.wal.append(log.payload, Durability.LOCAL);
    }

    /** The floor for a mapped log: the same bytes stored into a mapping, then {@code force(false)}. */
    @Benchmark
    public int rawMmapWriteAndForce(RawMapping raw) throws IOException {
        if (raw.position + raw.record.length > FILE_SIZE) {
            raw.position = 0;
        }
        raw.map.put(raw.position, raw.record);
        raw.position += raw.record.length;
        raw.channel.force(false);
        return raw.position;
    }

    @Benchmark
    public long rawWriteAndForce(RawFile raw) throws IOException {
        raw.position = RawForceLoop.writeAndForce(raw.channel, raw.buffer, raw.position, FILE_SIZE);
        return raw.position;
    }
}
