package io.walden.bench;

import io.walden.core.Durability;
import io.walden.core.SyncMethod;
import io.walden.core.Wal;
import io.walden.core.WalConfig;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * How well the sidecar batches against the embedded log and PostgreSQL, measured in the same minutes: for each
 * connection count N, rounds of five adjacent windows on the same disk: the raw {@code write()} + fdatasync floor
 * (a short slice, to tell a fast-fsync minute from a slow one), N embedded LOCAL committer threads, N keep-alive
 * connections appending at {@code durability=local}, the same connections asking {@code GET /health} (the HTTP path
 * with no log behind it: issue #39's goal is {@code local} at 0.7 x the lower of that and the embedded log), and N
 * pgbench clients at {@code synchronous_commit=on}. The
 * disk's latency drifts 2-3x within minutes, so each figure is the median over rounds of the ratio of adjacent
 * windows, never a ratio of figures from different minutes.
 */
final class InterleavedBatching {
    static final String NAME = "http local vs embedded and postgres, interleaved";
    static final String KIND = "interleaved-batching";
    private static final int PAYLOAD = 64;
    private static final long RAW_FILE_SIZE = 64L << 20;

    private final LoadMeasurement scratch;
    private final ClosedLoop closedLoop;

    /** @param full whether windows are the full run's (8 s) or the quick one's (2.5 s) */
    InterleavedBatching(boolean full) {
        this.scratch = new LoadMeasurement(full);
        this.closedLoop = new ClosedLoop(scratch);
    }

    /** One result per connection count, each over {@code rounds} rounds; {@code pg} null leaves PostgreSQL out. */
    List<Map<String, Object>> run(ServerProcess server, PostgresPeer pg, int[] connections, int rounds, int pgSeconds)
            throws Exception {
        List<Map<String, Object>> out = new ArrayList<>();
        Path d = BenchFiles.newDir("interleaved-batching");
        byte[] bytes = new byte[PAYLOAD];
        byte[] request = HttpMessages.post("/v1/records?durability=local", bytes);
        byte[] health = HttpMessages.get("/health");
        try (Wal wal = Wal.open(WalConfig.builder(d.resolve("embedded")).build());
             FileChannel raw = RawForceLoop.preallocated(d.resolve("raw.dat"), RAW_FILE_SIZE)) {
            ByteBuffer record = ByteBuffer.allocateDirect(PAYLOAD + 24);
            long[] pos = {0};
            for (int n : connections) {
                List<Map<String, Object>> samples = new ArrayList<>();
                for (int round = 0; round < rounds; round++) {
                    Map<String, Object> s = new LinkedHashMap<>();
                    double rawRate = LoadMeasurement.sliceRate(TimeUnit.MILLISECONDS.toNanos(300),
                            () -> pos[0] = RawForceLoop.writeAndForce(raw, record, pos[0], RAW_FILE_SIZE));
                    s.put("rawForceUs", 1e6 / rawRate);
                    Map<String, Object> e = scratch.measure("  embedded local", "threads", SyncMethod.FDATASYNC, PAYLOAD, n,
                            () -> wal.append(bytes, Durability.LOCAL), wal.status()::flushCount);
                    s.put("embedded", ((Number) e.get("commitsPerSecond")).doubleValue());
                    s.put("embeddedPerFlush", e.get("commitsPerFlush"));
                    ClosedLoop.Outcome o = closedLoop.measure(server, n, 1, request, true);
                    if (o.failure() != null) {
                        throw new IllegalStateException("http local with " + n + " connections: " + o.failure());
                    }
                    LoadMeasurement.Window w = o.window();
                    double http = o.answers() / (w.elapsedNanos() / 1e9);
                    s.put("http", http);
                    s.put("httpPerFlush", w.flushes() > 0 ? o.answers() / (double) w.flushes() : 0);
                    s.put("httpP99ToP50", w.histogram().getValueAtPercentile(99) / (double) Math.max(1, w.histogram().getValueAtPercentile(50)));
                    s.put("httpToEmbedded", http / (double) s.get("embedded"));
                    ClosedLoop.Outcome h = closedLoop.measure(server, n, 1, health, false);
                    if (h.failure() != null) {
                        throw new IllegalStateException("GET /health with " + n + " connections: " + h.failure());
                    }
                    double healthRate = h.answers() / (h.window().elapsedNanos() / 1e9);
                    s.put("health", healthRate);
                    s.put("httpToLower", http / Math.min(healthRate, (double) s.get("embedded")));
                    s.put("serverCpuUsPerRequest", o.serverCpuNanos() / 1e3 / o.answers());
                    s.put("healthServerCpuUsPerRequest", h.serverCpuNanos() / 1e3 / h.answers());
                    if (pg != null) {
                        double tps = pg.tps(n, pgSeconds);
                        s.put("pg", tps);
                        s.put("httpToPg", http / tps);
                    }
                    System.out.printf(Locale.ROOT, "  %3d connections, round %d: raw force %.0f us, embedded %,.0f/s, http %,.0f/s "
                                    + "(%.1f/flush, p99/p50 %.2f, server %.1f us/request), health %,.0f/s (%.1f us/request), "
                                    + "http / lower %.2f%s%n", n, round + 1, (double) s.get("rawForceUs"),
                            (double) s.get("embedded"), http, (double) s.get("httpPerFlush"), (double) s.get("httpP99ToP50"),
                            (double) s.get("serverCpuUsPerRequest"), healthRate, (double) s.get("healthServerCpuUsPerRequest"),
                            (double) s.get("httpToLower"),
                            pg == null ? "" : String.format(Locale.ROOT, ", postgres %,.0f tps", (double) s.get("pg")));
                    samples.add(s);
                }
                out.add(summary(n, samples, pg != null));
            }
        } finally {
            BenchFiles.delete(d);
        }
        return out;
    }

    private static Map<String, Object> summary(int n, List<Map<String, Object>> samples, boolean withPg) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("name", NAME);
        r.put("kind", KIND);
        r.put("connections", n);
        r.put("rounds", samples.size());
        List<String> keys = new ArrayList<>(List.of("rawForceUs", "embedded", "embeddedPerFlush", "http", "httpPerFlush",
                "httpP99ToP50", "httpToEmbedded", "health", "httpToLower", "serverCpuUsPerRequest", "healthServerCpuUsPerRequest"));
        if (withPg) {
            keys.addAll(List.of("pg", "httpToPg"));
        }
        for (String key : keys) {
            r.put(key, LoadMeasurement.round2(median(samples, s -> ((Number) s.get(key)).doubleValue())));
        }
        List<Double> raw = new ArrayList<>();
        samples.forEach(s -> raw.add(LoadMeasurement.round2((double) s.get("rawForceUs"))));
        r.put("rawForceUsByRound", raw);
        System.out.printf(Locale.ROOT, "%-60s %3d: median http/embedded %.2f, http/lower of embedded and health %.2f%s, "
                        + "http %.1f commits/flush, raw force %.0f us%n",
                NAME, n, (double) r.get("httpToEmbedded"), (double) r.get("httpToLower"),
                withPg ? String.format(Locale.ROOT, ", http/postgres %.2f", (double) r.get("httpToPg")) : "",
                (double) r.get("httpPerFlush"), (double) r.get("rawForceUs"));
        return r;
    }

    private static double median(List<Map<String, Object>> samples, ToDoubleFunction<Map<String, Object>> f) {
        double[] v = samples.stream().mapToDouble(f).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }
}
