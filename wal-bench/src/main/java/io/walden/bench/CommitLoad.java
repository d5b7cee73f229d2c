package io.walden.bench;

import io.walden.core.Durability;
import io.walden.core.SyncMethod;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.internal.segment.SegmentFiles;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import org.HdrHistogram.Recorder;

import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Pattern;

/**
 * The commit load generator: durable commit throughput and latency with 1 to 256 committers (threads, or
 * asynchronous appends in flight from one thread), against the physical baselines measured in the same run:
 * a raw {@code FileChannel} write + {@code force(false)} loop, a raw mmap write + {@code force(false)} loop,
 * and Chronicle Queue's appender for {@code OFF}. Latencies go into HdrHistograms; commits per flush come
 * from the log's own flush counter.
 *
 * <p>Usage: {@code CommitLoad [--quick|--full] [--dir DIR] [--json FILE] [--only REGEX]}. Quick mode finishes in
 * about three minutes; {@code --only} runs the scenarios whose name matches (e.g. {@code --only 'off|chronicle'}).
 */
public final class CommitLoad {
    private static final long RAW_FILE_SIZE = 256L << 20;

    /** OFF appends and their peer take tens of nanoseconds: time one in this many (see LoadMeasurement). */
    private static final int FAST_OP_SAMPLING = 64;
    /** The records that take a new log half way through its first segment before a scenario ({@link #openSteady}). */
    private static final int FILLER_PAYLOAD = 4064;

    private final boolean full;
    private final Path dir;
    private final LoadMeasurement measurement;
    private final Pattern only;

    private CommitLoad(boolean full, Path dir, String only) {
        this.full = full;
        this.dir = dir;
        this.measurement = new LoadMeasurement(full);
        this.only = Pattern.compile(only);
    }

    /** Whether the scenario named {@code name} was asked for ({@code --only REGEX}, found anywhere in the name). */
    private boolean wanted(String name) {
        return only.matcher(name).find();
    }

    public static void main(String[] args) throws Exception {
        LoadArgs a = LoadArgs.parse("CommitLoad", args, Path.of("target/commit-load.json"));
        Path dir = a.dir();
        Files.createDirectories(dir);
        CommitLoad load = new CommitLoad(a.full(), dir, a.only());
        load.runAll();
        load.measurement.writeJson(a.json(), dir);
    }

    private void runAll() throws Exception {
        int[] committers = {1, 4, 16, 64, 256};
        int[] payloads = full ? new int[] {64, 1024, 16384} : new int[] {64};
        SyncMethod[] methods = full ? new SyncMethod[] {SyncMethod.FDATASYNC, SyncMethod.FSYNC, SyncMethod.OPEN_DATASYNC}
                : new SyncMethod[] {SyncMethod.FDATASYNC};
        for (int payload : payloads) {
            rawPwrite(payload);
            rawMmap(payload);
        }
        for (SyncMethod method : new SyncMethod[] {SyncMethod.FDATASYNC, SyncMethod.OPEN_DATASYNC}) {
            if (wanted("interleaved lone commit")) {
                measurement.results().add(InterleavedLoneCommit.run(method, 64, full ? 50 : 25, 200));
            }
        }
        for (SyncMethod method : methods) {
            for (int payload : payloads) {
                for (int n : committers) {
                    waldenThreads(Durability.LOCAL, method, payload, n);
                }
                for (int n : full ? committers : new int[] {1, 16, 256}) {
                    waldenAsync(method, payload, n);
                }
            }
        }
        for (int payload : payloads) {
            waldenThreads(Durability.OFF, SyncMethod.FDATASYNC, payload, 1);
            chronicleQueue(payload);
        }
    }

    // ------------------------------------------------------------------ scenarios

    private void rawPwrite(int payload) throws Exception {
        if (!wanted("raw pwrite+fdatasync")) {
            return;
        }
        Path d = BenchFiles.newDir("raw-pwrite");
        try (FileChannel ch = RawForceLoop.preallocated(d.resolve("raw.dat"), RAW_FILE_SIZE)) {
            ByteBuffer record = ByteBuffer.allocateDirect(payload + 24);
            long[] pos = {0};
            measurement.measure("raw pwrite+fdatasync", "baseline", null, payload, 1, () -> {
                pos[0] = RawForceLoop.writeAndForce(ch, record, pos[0], RAW_FILE_SIZE);
            }, () -> -1);
        } finally {
            BenchFiles.delete(d);
        }
    }

    private void rawMmap(int payload) throws Exception {
        if (!wanted("raw mmap write+fdatasync")) {
            return;
        }
        Path d = BenchFiles.newDir("raw-mmap");
        try (FileChannel ch = RawForceLoop.preallocated(d.resolve("raw.dat"), RAW_FILE_SIZE)) {
            MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_WRITE, 0, RAW_FILE_SIZE);
            byte[] record = new byte[payload + 24];
            long[] pos = {0};
            measurement.measure("raw mmap write+fdatasync", "baseline", null, payload, 1, () -> {
                if (pos[0] + record.length > RAW_FILE_SIZE) {
                    pos[0] = 0;
                }
                map.put((int) pos[0], record);
                pos[0] += record.length;
                ch.force(false);
            }, () -> -1);
        } finally {
            BenchFiles.delete(d);
        }
    }

    private void waldenThreads(Durability level, SyncMethod method, int payload, int threads) throws Exception {
        String name = "walden " + level.configName() + " " + method.name().toLowerCase(Locale.ROOT);
        if (!wanted(name)) {
            return;
        }
        Path d = BenchFiles.newDir("walden");
        try (Wal wal = openSteady(WalConfig.builder(d).syncMethod(method).build())) {
            byte[] bytes = new byte[payload];
            int sampling = level == Durability.OFF ? FAST_OP_SAMPLING : 1;
            measurement.measure(name, "threads", method, payload, threads, sampling, () -> wal.append(bytes, level),
                    wal.status()::flushCount);
        } finally {
            BenchFiles.delete(d);
        }
    }

    /**
     * A log for one scenario, opened in the state every later minute of a log's life is in: one segment ahead. Since
     * 946965a a log prepares its next segment once half way through the current one, not at open (from its first roll
     * on it stays one segment ahead, as before). A fresh log measured for a few seconds at 64 committers or more passed
     * that middle inside the window, so the window paid a 64 MiB zero-fill and its force beside the commits, and at
     * fewer committers it did not; a log of the builds before paid it at open, outside the window. That made this
     * build look 0.87 x the one of format 1 at 64 committers and 1.0 x at 1 to 16 (issue #39; 0.97 x at 64 with this
     * change, 6 rounds alternating). So the log is filled half way with OFF records first, and measuring starts once
     * its next segment is there.
     */
    private static Wal openSteady(WalConfig config) throws Exception {
        Wal wal = Wal.open(config);
        try {
            byte[] filler = new byte[FILLER_PAYLOAD];
            long records = (config.segmentSize() / 2 + FILLER_PAYLOAD) / FILLER_PAYLOAD;
            for (long i = 0; i < records; i++) {
                wal.append(filler, Durability.OFF);
            }
            Path next = config.directory().resolve(SegmentFiles.name(config.segmentSize()));
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
            while (!Files.exists(next)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the log's next segment " + next + " was not prepared within a minute");
                }
                Thread.sleep(10);
            }
            return wal;
        } catch (Exception | Error e) {
            wal.close();
            throw e;
        }
    }

    private void waldenAsync(SyncMethod method, int payload, int inFlight) throws Exception {
        if (!wanted("walden local " + method.name().toLowerCase(Locale.ROOT) + " async")) {
            return;
        }
        Path d = BenchFiles.newDir("walden-async");
        try (Wal wal = openSteady(WalConfig.builder(d).syncMethod(method).build())) {
            byte[] bytes = new byte[payload];
            Semaphore window = new Semaphore(inFlight);
            Recorder recorder = new Recorder(3);
            LongAdder commits = new LongAdder();
            AtomicBoolean counting = new AtomicBoolean();
            AtomicBoolean stop = new AtomicBoolean();
            Thread producer = new Thread(() -> {
                while (!stop.get()) {
                    window.acquireUninterruptibly();
                    long start = System.nanoTime();
                    wal.appendAsync(bytes, Durability.LOCAL).whenComplete((lsn, error) -> {
                        if (counting.get() && error == null) {
                            recorder.recordValue(Math.max(1, (System.nanoTime() - start) / 1000));
                            commits.increment();
                        }
                        window.release();
                    });
                }
            }, "async-producer");
            producer.start();
            LoadMeasurement.Window w = measurement.window(recorder, counting, wal.status()::flushCount);
            stop.set(true);
            window.release(inFlight);
            producer.join();
            measurement.record("walden local " + method.name().toLowerCase(Locale.ROOT), "async", method, payload, inFlight,
                    commits.sum(), w.elapsedNanos(), w.flushes(), w.histogram(), w.cpuNanos());
        } finally {
            BenchFiles.delete(d);
        }
    }

    private void chronicleQueue(int payload) throws Exception {
        if (!wanted("chronicle queue writeBytes")) {
            return;
        }
        Path d = BenchFiles.newDir("chronicle");
        try (ChronicleQueue queue = SingleChronicleQueueBuilder.single(d.toFile()).build();
             ExcerptAppender appender = queue.createAppender()) {
            byte[] bytes = new byte[payload];
            measurement.measure("chronicle queue writeBytes", "peer", null, payload, 1, FAST_OP_SAMPLING,
                    () -> appender.writeBytes(b -> b.write(bytes)), () -> -1);
        } finally {
            BenchFiles.delete(d);
        }
    }
}
