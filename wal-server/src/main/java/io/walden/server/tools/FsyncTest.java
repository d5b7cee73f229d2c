package io.walden.server.tools;

import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Like pg_test_fsync: how fast each way of making a 4 KiB write durable is on the file system of a
 * directory, on a preallocated file and on a growing one. The mapped methods are the ones Walden's sync
 * methods use; the {@code write()} ones show the floor of a non-mapped log.
 *
 * <p>Thread-safety: not thread-safe; one run per instance.
 */
public final class FsyncTest {
    public static final int BLOCK = 4096;
    private static final long PREALLOCATED = 64L << 20;

    /** One measured method. {@code walden} names the SyncMethod that does this, or null. */
    public record Measurement(String file, String method, String walden, long ops, double opsPerSecond,
                              double meanMicros, long p99Micros) {
    }

    private final Path dir;
    private final long nanosPerMethod;
    private final Consumer<String> progress;
    private final List<Measurement> results = new ArrayList<>();

    public FsyncTest(Path dir, long nanosPerMethod, Consumer<String> progress) {
        this.dir = dir;
        this.nanosPerMethod = nanosPerMethod;
        this.progress = progress;
    }

    @FunctionalInterface
    private interface Step {
        void run(long i) throws IOException;
    }

    public List<Measurement> run() throws IOException {
        Files.createDirectories(dir);
        Path file = dir.resolve("walden-test-fsync.tmp");
        try {
            ByteBuffer block = ByteBuffer.allocateDirect(BLOCK);
            byte[] bytes = new byte[BLOCK];
            long blocks = PREALLOCATED / BLOCK;
            try (FileChannel ch = preallocate(file)) {
                measure("preallocated", "write + fdatasync", "FDATASYNC", i -> {
                    ch.write(block.clear(), (i % blocks) * BLOCK);
                    ch.force(false);
                });
                measure("preallocated", "write + fsync", "FSYNC", i -> {
                    ch.write(block.clear(), (i % blocks) * BLOCK);
                    ch.force(true);
                });
                MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_WRITE, 0, PREALLOCATED);
                // Stores through a mapping: how Walden wrote before its WAL buffers, for comparison.
                measure("preallocated", "mmap store + fdatasync", null, i -> {
                    map.put((int) ((i % blocks) * BLOCK), bytes);
                    ch.force(false);
                });
                measure("preallocated", "mmap store + fsync", null, i -> {
                    map.put((int) ((i % blocks) * BLOCK), bytes);
                    ch.force(true);
                });
                measure("preallocated", "mmap store + msync(range)", null, i -> {
                    int at = (int) ((i % blocks) * BLOCK);
                    map.put(at, bytes);
                    map.force(at, BLOCK);
                });
            }
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.DSYNC)) {
                measure("preallocated", "write, O_DSYNC", "OPEN_DATASYNC", i -> ch.write(block.clear(), (i % blocks) * BLOCK));
            }
            growing(file, "write + fdatasync", Set.of(), true, block);
            growing(file, "write + fsync", Set.of(), false, block);
            growing(file, "write, O_DSYNC", Set.of(StandardOpenOption.DSYNC), null, block);
        } finally {
            Files.deleteIfExists(file);
        }
        return results;
    }

    /** The fastest of the methods Walden offers, on a preallocated file (Walden always preallocates). */
    public Measurement recommended() {
        Measurement best = null;
        for (Measurement m : results) {
            if (m.walden() != null && (best == null || m.opsPerSecond() > best.opsPerSecond())) {
                best = m;
            }
        }
        return best;
    }

    private void growing(Path file, String method, Set<StandardOpenOption> extra, Boolean forceMetadata, ByteBuffer block)
            throws IOException {
        Files.deleteIfExists(file);
        Set<StandardOpenOption> options = new HashSet<>(extra);
        options.add(StandardOpenOption.CREATE);
        options.add(StandardOpenOption.WRITE);
        try (FileChannel ch = FileChannel.open(file, options)) {
            measure("growing", method, null, i -> {
                ch.write(block.clear(), i * BLOCK);
                if (forceMetadata != null) {
                    ch.force(forceMetadata);
                }
            });
        }
    }

    private FileChannel preallocate(Path file) throws IOException {
        FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.READ, StandardOpenOption.WRITE);
        ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
        for (long pos = 0; pos < PREALLOCATED; ) {
            pos += ch.write(zeros.clear(), pos);
        }
        ch.force(true);
        return ch;
    }

    private void measure(String file, String method, String walden, Step step) throws IOException {
        Histogram h = new Histogram(3);
        long start = System.nanoTime();
        long deadline = start + nanosPerMethod;
        long i = 0;
        for (long now = start; now < deadline; i++) {
            step.run(i);
            long after = System.nanoTime();
            h.recordValue(Math.max(1, (after - now) / 1000));
            now = after;
            if ((i & 63) == 0) {
                progress.accept(file + " file, " + method + ": " + (i + 1) + " ops");
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        results.add(new Measurement(file, method, walden, i, i / seconds, h.getMean(), h.getValueAtPercentile(99)));
    }
}
