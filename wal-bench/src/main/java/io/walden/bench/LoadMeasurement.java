package io.walden.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.walden.core.SyncMethod;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * How the load generators measure: an operation run back to back on N threads, a warm-up, then a measured window
 * counting commits, flushes and process CPU, latencies in an HdrHistogram; each result is printed as a line and
 * kept (as a map, for the JSON report).
 */
final class LoadMeasurement {
    private final boolean full;
    private final long warmupNanos;
    private final long measureNanos;
    private final List<Map<String, Object>> results = new ArrayList<>();

    LoadMeasurement(boolean full) {
        this.full = full;
        this.warmupNanos = TimeUnit.MILLISECONDS.toNanos(full ? 2000 : 700);
        this.measureNanos = TimeUnit.MILLISECONDS.toNanos(full ? 8000 : 2500);
    }

    List<Map<String, Object>> results() {
        return results;
    }

    /** Writes the mode, the machine (with {@code dataDir}'s file system) and every result to {@code json}. */
    void writeJson(Path json, Path dataDir) throws IOException {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("mode", full ? "full" : "quick");
        out.put("machine", Machine.describe(dataDir));
        out.put("results", results);
        Files.createDirectories(json.toAbsolutePath().getParent());
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
                .writeValue(json.toFile(), out);
        System.out.println("wrote " + json);
    }

    @FunctionalInterface
    interface Op {
        void run() throws Exception;
    }

    @FunctionalInterface
    interface Counter {
        long get();
    }

    /** Runs {@code op} back to back on {@code threads} threads: warm-up, then a measured window, timing every op. */
    Map<String, Object> measure(String name, String kind, SyncMethod method, int payload, int threads, Op op,
                         Counter flushCounter) throws Exception {
        return measure(name, kind, method, payload, threads, 1, op, flushCounter);
    }

    /**
     * {@link #measure(String, String, SyncMethod, int, int, Op, Counter)}, timing one op in {@code sampleEvery} (a
     * power of two). For ops of tens of nanoseconds (OFF appends and their peer): two clock reads and a histogram
     * entry per op would cost more than the op and hide the difference being measured. Every op is counted either
     * way, in a per-thread count.
     */
    Map<String, Object> measure(String name, String kind, SyncMethod method, int payload, int threads, int sampleEvery,
                                Op op, Counter flushCounter) throws Exception {
        if (Integer.bitCount(sampleEvery) != 1) {
            throw new IllegalArgumentException("sampleEvery must be a power of two, got " + sampleEvery);
        }
        int mask = sampleEvery - 1;
        Recorder recorder = new Recorder(3);
        LongAdder commits = new LongAdder();
        AtomicBoolean counting = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        List<Throwable> errors = new ArrayList<>();
        CountDownLatch done = new CountDownLatch(threads);
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                long counted = 0;
                try {
                    for (long i = 0; !stop.get(); i++) {
                        if ((i & mask) != 0) {
                            op.run();
                            if (counting.get()) {
                                counted++;
                            }
                            continue;
                        }
                        long start = System.nanoTime();
                        op.run();
                        if (counting.get()) {
                            recorder.recordValue(Math.max(1, (System.nanoTime() - start) / 1000));
                            counted++;
                        }
                    }
                } catch (Throwable e) {
                    synchronized (errors) {
                        errors.add(e);
                    }
                } finally {
                    commits.add(counted);
                    done.countDown();
                }
            }, "load-" + t);
            th.setDaemon(true);
            th.start();
        }
        Window w = window(recorder, counting, flushCounter);
        stop.set(true);
        if (!done.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException(name + ": load threads did not stop");
        }
        if (!errors.isEmpty()) {
            throw new IllegalStateException(name + " failed", errors.get(0));
        }
        return record(name, kind, method, payload, threads, commits.sum(), w.elapsedNanos, w.flushes, w.histogram, w.cpuNanos);
    }

    /** What one measured window saw. */
    record Window(long elapsedNanos, long flushes, Histogram histogram, long cpuNanos) {
    }

    /** Lets the load warm up, then counts commits, flushes and CPU over the measured window. */
    Window window(Recorder recorder, AtomicBoolean counting, Counter flushCounter) throws InterruptedException {
        Thread.sleep(TimeUnit.NANOSECONDS.toMillis(warmupNanos));
        recorder.reset();
        long flushes0 = flushCounter.get();
        long cpu0 = processCpuNanos();
        counting.set(true);
        long t0 = System.nanoTime();
        Thread.sleep(TimeUnit.NANOSECONDS.toMillis(measureNanos));
        counting.set(false);
        long elapsed = System.nanoTime() - t0;
        long cpu = processCpuNanos() - cpu0;
        long flushes = flushes0 < 0 ? -1 : flushCounter.get() - flushes0;
        return new Window(elapsed, flushes, recorder.getIntervalHistogram(), cpu);
    }

    Map<String, Object> record(String name, String kind, SyncMethod method, int payload, int committers, long commits,
                        long elapsedNanos, long flushes, Histogram h, long cpuNanos) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("name", name);
        r.put("kind", kind);
        r.put("syncMethod", method == null ? null : method.name());
        r.put("payload", payload);
        r.put("committers", committers);
        r.put("commits", commits);
        double seconds = elapsedNanos / 1e9;
        r.put("commitsPerSecond", Math.round(commits / seconds));
        r.put("flushes", flushes);
        r.put("commitsPerFlush", flushes > 0 ? round2((double) commits / flushes) : null);
        r.put("p50us", h.getValueAtPercentile(50));
        r.put("p99us", h.getValueAtPercentile(99));
        r.put("p999us", h.getValueAtPercentile(99.9));
        r.put("meanUs", round2(h.getMean()));
        r.put("cpuCores", round2(cpuNanos / (double) elapsedNanos));
        results.add(r);
        System.out.printf(Locale.ROOT, "%-34s %-8s %6d B %4d committers: %,10d commits/s  %8s commits/flush  p50 %6d us  p99 %6d us  p99.9 %6d us  cpu %.2f cores%n",
                name, kind, payload, committers, r.get("commitsPerSecond"),
                r.get("commitsPerFlush") == null ? "-" : r.get("commitsPerFlush"), h.getValueAtPercentile(50),
                h.getValueAtPercentile(99), h.getValueAtPercentile(99.9), cpuNanos / (double) elapsedNanos);
        return r;
    }

    static double round2(double v) {
        return Math.round(v * 100) / 100.0;
    }

    private static long processCpuNanos() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        }
        return 0;
    }


    /** One operation of an interleaved measurement (a commit, a request and its answer, a raw write and force). */
    @FunctionalInterface
    interface Operation {
        void run() throws Exception;
    }

    /**
     * Runs {@code op} back to back for one slice of {@code sliceNanos}; returns its rate per second. Interleaved
     * measurements alternate slices of two operations, because this machine's disk drifts within minutes.
     */
    static double sliceRate(long sliceNanos, Operation op) throws Exception {
        long n = 0;
        long t0 = System.nanoTime();
        while (System.nanoTime() - t0 < sliceNanos) {
            op.run();
            n++;
        }
        return n / ((System.nanoTime() - t0) / 1e9);
    }
}
