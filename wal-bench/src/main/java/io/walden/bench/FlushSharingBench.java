package io.walden.bench;

import com.sun.jna.Library;
import com.sun.jna.Native;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * What it costs the disk to make one commit of each of N logs durable, by each way a store could share the flush
 * across its logs (issue #36, docs/group-commit.md "Flushes across logs"). Every way starts from the same state: N
 * preallocated files (one per log), each with 64 B just written with {@code pwrite} at its own growing offset, and
 * ends when all N are durable. A round is one such batch; the figure is commits (N per round) per second, and each
 * way's ratio to the shared journal's, which is the floor: one file, N records in one write, one {@code fdatasync}
 * (what one log with N committers does per flush).
 *
 * <ul>
 *   <li><b>own thread each</b>: N threads, each writing and forcing its own file back to back (what N logs with one
 *       committer each do today); commits/s over the whole run.</li>
 *   <li><b>sequential</b>: one thread writes the N files, then forces each in turn.</li>
 *   <li><b>parallel k</b>: one thread writes, then k threads force the N files between them.</li>
 *   <li><b>syncfs</b>: one thread writes, then one {@code syncfs(2)} of the file system (which also writes back
 *       and flushes whatever else is dirty on it: only sound on a volume of the store's own).</li>
 *   <li><b>journal</b>: the N records in one write to one shared file and one {@code fdatasync}; the logs' own files
 *       would be written later, outside the commit (not measured here: their write-back is off the commit path).</li>
 * </ul>
 *
 * <p>Usage: {@code FlushSharingBench [seconds per way (default 5)] [N ...] (default 16 64)}. Machine-readable lines
 * start with {@code RESULT}.
 */
public final class FlushSharingBench {
    private static final int RECORD = 64;
    private static final long FILE_SIZE = 16L << 20;

    /** The C library's {@code syncfs} and {@code open}, through JNA (which Chronicle already brings). */
    public interface LibC extends Library {
        int open(String path, int flags);

        int syncfs(int fd);

        int close(int fd);
    }

    private FlushSharingBench() {
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5;
        List<Integer> ns = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            ns.add(Integer.parseInt(args[i]));
        }
        if (ns.isEmpty()) {
            ns = List.of(16, 64);
        }
        LibC libc = Native.load("c", LibC.class);
        Path dir = BenchFiles.newDir("flush-sharing");
        System.out.println("machine: " + Machine.describe(dir));
        try {
            for (int n : ns) {
                run(n, seconds, dir, libc);
            }
        } finally {
            BenchFiles.delete(dir);
        }
    }

    private static void run(int n, double seconds, Path dir, LibC libc) throws Exception {
        FileChannel[] files = new FileChannel[n];
        for (int i = 0; i < n; i++) {
            files[i] = RawForceLoop.preallocated(dir.resolve("log-" + n + "-" + i), FILE_SIZE);
        }
        FileChannel journal = RawForceLoop.preallocated(dir.resolve("journal-" + n), FILE_SIZE);
        int dirFd = libc.open(dir.toString(), 0);
        if (dirFd < 0) {
            throw new IOException("cannot open " + dir + " for syncfs");
        }
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(8, n));
        try {
            long nanos = (long) (seconds * 1e9);
            // Alternate the ways twice, so that a slow minute of the disk does not fall on one way alone.
            double[][] rates = new double[7][2];
            for (int pass = 0; pass < 2; pass++) {
                rates[0][pass] = journal(journal, n, nanos);
                rates[1][pass] = ownThreadEach(files, pool, nanos);
                rates[2][pass] = rounds(files, nanos, fs -> forceAll(fs, 0, 1));
                rates[3][pass] = rounds(files, nanos, fs -> forceParallel(fs, pool, 2));
                rates[4][pass] = rounds(files, nanos, fs -> forceParallel(fs, pool, 4));
                rates[5][pass] = rounds(files, nanos, fs -> forceParallel(fs, pool, Math.min(8, n)));
                rates[6][pass] = rounds(files, nanos, fs -> {
                    if (libc.syncfs(dirFd) != 0) {
                        throw new IOException("syncfs failed: errno " + Native.getLastError());
                    }
                });
            }
            String[] names = {"journal", "own thread each", "sequential", "parallel 2", "parallel 4",
                "parallel " + Math.min(8, n), "syncfs"};
            double floor = (rates[0][0] + rates[0][1]) / 2;
            for (int w = 0; w < names.length; w++) {
                double rate = (rates[w][0] + rates[w][1]) / 2;
                System.out.printf(Locale.ROOT, "RESULT logs=%d way=%s commits_per_s=%.0f vs_journal=%.2f passes=%.0f/%.0f%n",
                        n, names[w].replace(' ', '_'), rate, rate / floor, rates[w][0], rates[w][1]);
            }
        } finally {
            pool.shutdownNow();
            libc.close(dirFd);
            journal.close();
            for (FileChannel f : files) {
                f.close();
            }
        }
    }

    private interface Force {
        void all(FileChannel[] files) throws Exception;
    }

    /** Rounds of: 64 B written to each file with {@code pwrite}, then {@code force}; N commits per round. */
    private static double rounds(FileChannel[] files, long nanos, Force force) throws Exception {
        ByteBuffer record = ByteBuffer.allocateDirect(RECORD);
        long[] at = new long[files.length];
        long commits = 0;
        long start = System.nanoTime();
        long end = start + nanos;
        long now;
        do {
            for (int i = 0; i < files.length; i++) {
                at[i] = write(files[i], record, at[i]);
            }
            force.all(files);
            commits += files.length;
            now = System.nanoTime();
        } while (now < end);
        return commits * 1e9 / (now - start);
    }

    private static void forceAll(FileChannel[] files, int from, int step) throws IOException {
        for (int i = from; i < files.length; i += step) {
            files[i].force(false);
        }
    }

    private static void forceParallel(FileChannel[] files, ExecutorService pool, int k) throws Exception {
        List<Future<?>> parts = new ArrayList<>(k);
        for (int t = 0; t < k; t++) {
            int from = t;
            parts.add(pool.submit(() -> {
                forceAll(files, from, k);
                return null;
            }));
        }
        for (Future<?> f : parts) {
            f.get();
        }
    }

    /** N threads, each writing and forcing its own file back to back. */
    private static double ownThreadEach(FileChannel[] files, ExecutorService pool, long nanos) throws Exception {
        long start = System.nanoTime();
        long end = start + nanos;
        List<Future<Long>> counts = new ArrayList<>(files.length);
        for (FileChannel f : files) {
            counts.add(pool.submit(() -> {
                ByteBuffer record = ByteBuffer.allocateDirect(RECORD);
                long at = 0;
                long commits = 0;
                while (System.nanoTime() < end) {
                    at = write(f, record, at);
                    f.force(false);
                    commits++;
                }
                return commits;
            }));
        }
        long total = 0;
        for (Future<Long> c : counts) {
            total += c.get();
        }
        return total * 1e9 / (System.nanoTime() - start);
    }

    /** N records in one write to one file, one fdatasync: the floor of any sharing of the flush. */
    private static double journal(FileChannel file, int n, long nanos) throws IOException {
        ByteBuffer batch = ByteBuffer.allocateDirect(RECORD * n);
        long at = 0;
        long commits = 0;
        long start = System.nanoTime();
        long end = start + nanos;
        long now;
        do {
            at = write(file, batch, at);
            file.force(false);
            commits += n;
            now = System.nanoTime();
        } while (now < end);
        return commits * 1e9 / (now - start);
    }

    private static long write(FileChannel file, ByteBuffer bytes, long at) throws IOException {
        if (at + bytes.capacity() > FILE_SIZE) {
            at = 0;
        }
        bytes.clear();
        while (bytes.hasRemaining()) {
            at += file.write(bytes, at);
        }
        return at;
    }
}
