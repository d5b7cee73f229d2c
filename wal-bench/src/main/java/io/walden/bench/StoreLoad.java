package io.walden.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.walden.core.Durability;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.WalStore;
import io.walden.core.WalStoreConfig;
import net.openhft.chronicle.core.OS;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Many logs in one process ({@code WalStore}), measured against one log and against separate {@code Wal}s in the same
 * run:
 * <ul>
 *   <li><b>Commits across logs</b>: N logs of a store with one LOCAL committer each, against one log of a store with
 *       N committers (the target ratio: at least 0.5), and N separate {@code Wal.open} logs with one committer each
 *       (what an application did before stores): commits/s and commits per flush.</li>
 *   <li><b>Taking turns with WAL buffers</b>: the same N logs with one committer each, in a store whose budget of
 *       WAL buffers holds half of their rings, against room for all: what waking a log costs when it must take a quiet
 *       log's ring.</li>
 *   <li><b>Footprint</b>: a store of 1,000 logs (1 MiB segments) beside a store of one: the time to create them and
 *       to open them again; the threads, the live heap, the JDK's direct buffers, Chronicle's native memory (the WAL
 *       buffers), the resident memory and the open descriptors, idle and after every log took one append.</li>
 *   <li><b>One busy log among idle ones</b>: one log of the default segment size, in place of one of those, appended
 *       to at OFF from one thread and at LOCAL by one committer: among 999 idle logs against alone in its store (the
 *       target ratio: at least 0.95).</li>
 * </ul>
 * Usage: {@code StoreLoad [--quick|--full] [--dir DIR] [--json FILE] [--only REGEX]} (the scenarios: {@code commits}, {@code turns},
 * {@code footprint}).
 */
public final class StoreLoad {
    private static final int PAYLOAD = 64;
    /** Segments of the footprint's logs: small, so that a thousand logs fit a test machine's disk. */
    private static final long SEGMENT = 1L << 20;
    /** Segments of the commit scenarios' logs, all alike: 64 logs of the default 64 MiB would write 8 GiB of zeros. */
    private static final long COMMIT_SEGMENT = 4L << 20;
    /** OFF appends take tens of nanoseconds: time one in this many (see LoadMeasurement). */
    private static final int FAST_OP_SAMPLING = 64;

    private final LoadMeasurement measurement;
    private final Path dir;
    private final boolean full;
    private final List<Map<String, Object>> footprints = new ArrayList<>();
    /** Longer than a log's idle time (5 s) plus a few of its periodic turns (1 s apart by default). */
    private static final long IDLE_WAIT_MILLIS = 9_000;

    private StoreLoad(boolean full, Path dir) {
        this.full = full;
        this.measurement = new LoadMeasurement(full);
        this.dir = dir;
    }

    public static void main(String[] args) throws Exception {
        LoadArgs a = LoadArgs.parse("StoreLoad", args, Path.of("target/store-load.json"));
        System.setProperty("walden.bench.dir", a.dir().toString());
        StoreLoad load = new StoreLoad(a.full(), a.dir());
        Pattern only = Pattern.compile(a.only());
        if (only.matcher("commits").find()) {
            for (int n : a.full() ? new int[] {16, 64, 256} : new int[] {16, 64}) {
                load.oneLogManyCommitters(n);
                load.manyLogsOneCommitterEach(n, true);
                load.manyLogsOneCommitterEach(n, false);
                load.separateWals(n);
            }
        }
        if (only.matcher("turns").find()) {
            for (int n : new int[] {16, 64}) {
                load.manyLogsOneCommitterEach(n, true); // the same logs with room for every ring: the baseline
                load.manyLogsTakingTurns(n);
            }
        }
        if (only.matcher("footprint").find()) {
            load.footprint(1);
            load.footprint(1000);
        }
        load.writeJson(a.json());
    }

    private void oneLogManyCommitters(int n) throws Exception {
        Path d = BenchFiles.newDir("store-one");
        try (WalStore store = WalStore.open(WalStoreConfig.builder(d).defaults(b -> b.segmentSize(COMMIT_SEGMENT)).build())) {
            Wal log = store.create("one");
            byte[] bytes = new byte[PAYLOAD];
            measurement.measure("store: 1 log, N committers", "threads", null, PAYLOAD, n,
                    () -> log.append(bytes, Durability.LOCAL), log.status()::flushCount);
        } finally {
            BenchFiles.delete(d);
        }
    }

    /**
     * @param shared whether the logs share their flushes through the store's journal (the default); without it each
     *               log forces its own file. Commits per flush count the journal's flushes when shared.
     */
    private void manyLogsOneCommitterEach(int n, boolean shared) throws Exception {
        Path d = BenchFiles.newDir("store-many");
        try (WalStore store = WalStore.open(WalStoreConfig.builder(d).defaults(b -> b.segmentSize(COMMIT_SEGMENT))
                .sharedJournal(shared).build())) {
            List<Wal> logs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                logs.add(store.create("log-" + i));
            }
            measureOneEach(shared ? "store: N logs, 1 committer each" : "store, own forces: N logs, 1 committer each",
                    logs, n, shared ? store::sharedFlushCount : null);
        } finally {
            BenchFiles.delete(d);
        }
    }

    /**
     * N logs with one committer each in a store whose budget of WAL buffers holds half of their rings: appends take
     * turns holding them, each wake giving back a quiet log's ring (WalStoreConfig.Builder#walBuffers). What taking
     * turns costs, against the same logs with room for all ("store: N logs, 1 committer each").
     */
    private void manyLogsTakingTurns(int n) throws Exception {
        Path d = BenchFiles.newDir("store-turns");
        long ring = Math.min(WalConfig.DEFAULT_WAL_BUFFERS, COMMIT_SEGMENT); // the logs' default rings
        try (WalStore store = WalStore.open(WalStoreConfig.builder(d).defaults(b -> b.segmentSize(COMMIT_SEGMENT))
                .walBuffers(ring * n / 2).build())) {
            List<Wal> logs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                logs.add(store.create("log-" + i));
            }
            measureOneEach("store, WAL buffers for half: N logs, 1 committer each", logs, n, store::sharedFlushCount);
        } finally {
            BenchFiles.delete(d);
        }
    }

    private void separateWals(int n) throws Exception {
        Path d = BenchFiles.newDir("separate");
        List<Wal> logs = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                logs.add(Wal.open(WalConfig.builder(d.resolve("log-" + i)).segmentSize(COMMIT_SEGMENT).build()));
            }
            measureOneEach("separate Wals, 1 committer each", logs, n, null);
        } finally {
            logs.forEach(Wal::close);
            BenchFiles.delete(d);
        }
    }

    /**
     * Each committer thread takes a log of its own, the first time it commits.
     *
     * @param forces what counts the forces (null: the logs' own flushes, summed)
     */
    private void measureOneEach(String name, List<Wal> logs, int n, LoadMeasurement.Counter forces) throws Exception {
        AtomicInteger next = new AtomicInteger();
        ThreadLocal<Wal> own = ThreadLocal.withInitial(() -> logs.get(next.getAndIncrement() % logs.size()));
        byte[] bytes = new byte[PAYLOAD];
        measurement.measure(name, "threads", null, PAYLOAD, n, () -> own.get().append(bytes, Durability.LOCAL),
                forces != null ? forces : () -> logs.stream().mapToLong(l -> l.status().flushCount()).sum());
    }

    private void footprint(int logs) throws Exception {
        Path d = BenchFiles.newDir("footprint");
        WalStoreConfig config = WalStoreConfig.builder(d).defaults(b -> b.segmentSize(SEGMENT)).build();
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("logs", logs);
        r.put("segmentSize", SEGMENT);
        Footprint before = Footprint.now();
        try {
            long start = System.nanoTime();
            try (WalStore store = WalStore.open(config)) {
                for (int i = 0; i < logs; i++) {
                    store.create("log-" + i);
                }
                r.put("createMillis", (System.nanoTime() - start) / 1_000_000);
            }
            start = System.nanoTime();
            try (WalStore store = WalStore.open(config)) {
                r.put("openMillis", (System.nanoTime() - start) / 1_000_000);
                r.put("idle", Footprint.now().minus(before));
                byte[] bytes = new byte[PAYLOAD];
                for (String name : store.names()) {
                    store.log(name).orElseThrow().append(bytes, Durability.LOCAL);
                }
                r.put("afterOneAppendEach", Footprint.now().minus(before));
                // An idle log (its end unmoved for 5 s) gives back its WAL buffers' memory and its segments' mappings
                // and descriptors: measured once every log had time to notice.
                Thread.sleep(IDLE_WAIT_MILLIS);
                r.put("idleAgain", Footprint.now().minus(before));
                // A log as an application would have it (the default segment size), in place of one of the others.
                store.delete("log-0");
                r.put("busyLog", busyLog(store.create("busy", b -> b.segmentSize(WalConfig.DEFAULT_SEGMENT_SIZE)), logs));
            }
        } finally {
            BenchFiles.delete(d);
        }
        footprints.add(r);
        System.out.printf(Locale.ROOT, "footprint of a store of %d log(s): %s%n", logs, r);
    }

    /** The append rates of {@code busy}, the one log appended to in a store of {@code logs}: at OFF, and at LOCAL. */
    private Map<String, Object> busyLog(Wal busy, int logs) throws Exception {
        byte[] bytes = new byte[PAYLOAD];
        String among = logs == 1 ? "alone in its store" : "among " + (logs - 1) + " idle logs";
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("off", measurement.measure("one busy log " + among + ", off", "threads", null, PAYLOAD, 1,
                FAST_OP_SAMPLING, () -> busy.append(bytes, Durability.OFF), busy.status()::flushCount)
                .get("commitsPerSecond"));
        r.put("local", measurement.measure("one busy log " + among + ", local", "threads", null, PAYLOAD, 1,
                () -> busy.append(bytes, Durability.LOCAL), busy.status()::flushCount).get("commitsPerSecond"));
        return r;
    }

    /**
     * What the process holds: its threads, its live heap (after a collection), the JDK's direct buffers, Chronicle's
     * native memory (the WAL buffers: OS.memory() counts each allocation and each free), its resident memory (all of
     * those, the segments' mapped pages and the JVM's own) and its open descriptors.
     */
    private record Footprint(long threads, long heapBytes, long directBytes, long nativeBytes, long residentBytes,
                             long descriptors) {
        static Footprint now() throws IOException {
            System.gc(); // the live heap, not what the next collection would free
            long direct = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                    .filter(p -> p.getName().equals("direct")).mapToLong(BufferPoolMXBean::getMemoryUsed).sum();
            return new Footprint(ManagementFactory.getThreadMXBean().getThreadCount(),
                    ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed(), direct,
                    OS.memory().nativeMemoryUsed(), rssBytes(), descriptorCount());
        }

        /** What this holds beyond {@code before}, by name (the JSON report's fields). */
        Map<String, Object> minus(Footprint before) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("threads", threads - before.threads);
            m.put("heapBytes", heapBytes - before.heapBytes);
            m.put("directBytes", directBytes - before.directBytes);
            m.put("nativeBytes", nativeBytes - before.nativeBytes);
            m.put("residentBytes", residentBytes - before.residentBytes);
            m.put("descriptors", descriptors - before.descriptors);
            return m;
        }

        /** This process's resident memory, from /proc. */
        private static long rssBytes() throws IOException {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
            return -1;
        }

        private static long descriptorCount() throws IOException {
            try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
                return fds.count();
            }
        }
    }

    private void writeJson(Path json) throws IOException {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("mode", full ? "full" : "quick");
        out.put("machine", Machine.describe(dir));
        out.put("commits", measurement.results());
        out.put("footprint", footprints);
        Files.createDirectories(json.toAbsolutePath().getParent());
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(json.toFile(), out);
        System.out.println("wrote " + json);
    }
}
