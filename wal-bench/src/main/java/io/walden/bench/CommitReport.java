package io.walden.bench;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * The embedded log's sections of docs/benchmarks.md, from {@link CommitLoad}'s JSON: the targets against the raw
 * write+fdatasync floor, Chronicle Queue (with JMH's figures) and PostgreSQL ({@code wal-bench/pgbench.sh}'s JSON),
 * the load generator's table, and the plot {@code benchmarks-commits.svg}.
 */
final class CommitReport {
    private final JsonNode load;
    private final JsonNode pgbench;
    private final JmhReport jmh;
    private final Consumer<String> line;

    /** @param pgbench pgbench's JSON, null when PostgreSQL was not measured */
    CommitReport(JsonNode load, JsonNode pgbench, JmhReport jmh, Consumer<String> line) {
        this.load = load;
        this.pgbench = pgbench;
        this.jmh = jmh;
        this.line = line;
    }

    void writeTargets() {
        line.accept("## Targets");
        line.accept("");
        targetTable();
        notes();
        againstPostgreSQL();
    }

    private void targetTable() {
        JsonNode rawPwrite = find("raw pwrite+fdatasync", 64, 1, "baseline");
        JsonNode rawMmap = find("raw mmap write+fdatasync", 64, 1, "baseline");
        JsonNode lone = find("walden local fdatasync", 64, 1, "threads");
        line.accept("| target | measured | verdict |");
        line.accept("|---|---|---|");
        for (JsonNode r : load.get("results")) {
            if (r.get("kind").asText().equals("interleaved")) {
                double ratio = r.get("medianRatio").asDouble();
                line.accept(String.format(Locale.ROOT, "| 1 committer, LOCAL (%s), 64 B: latency ≤ 1.15 × raw write+fdatasync, "
                                + "alternating 200 ms slices | commits/s ratio, median of %d rounds: **%.2f** (p25 %.2f, p75 %.2f): "
                                + "latency **%.2f ×** raw | %s |",
                        r.get("syncMethod").asText().toLowerCase(Locale.ROOT), r.get("rounds").asInt(), ratio,
                        r.get("p25Ratio").asDouble(), r.get("p75Ratio").asDouble(), 1 / ratio, 1 / ratio <= 1.15 ? "met" : "not met"));
            }
        }
        JsonNode jmhLone = jmh.score("LoneCommitterBenchmark.waldenAppendLocal");
        JsonNode jmhRaw = jmh.score("LoneCommitterBenchmark.rawWriteAndForce");
        if (jmhLone != null && jmhRaw != null) {
            double r = jmhLone.get("score").asDouble() / jmhRaw.get("score").asDouble();
            line.accept(String.format(Locale.ROOT, "| 1 committer, LOCAL, 64 B: latency ≤ 1.15 × raw write+fdatasync (JMH, mean) | %.0f µs vs %.0f µs = **%.2f×** | %s |",
                    jmhLone.get("score").asDouble(), jmhRaw.get("score").asDouble(), r, r <= 1.15 ? "met" : "not met"));
        }
        if (rawPwrite != null && lone != null) {
            double r = lone.get("meanUs").asDouble() / rawPwrite.get("meanUs").asDouble();
            line.accept(String.format(Locale.ROOT, "| (the same, from the load table's separate windows: noisier) | %.0f µs vs %.0f µs = %.2f× | - |",
                    lone.get("meanUs").asDouble(), rawPwrite.get("meanUs").asDouble(), r));
        }
        if (rawMmap != null && rawPwrite != null) {
            line.accept(String.format(Locale.ROOT, "| (the mmap floor Walden used to pay: a store into a mapping + fdatasync) | %.0f µs = %.2f × the write() floor | - |",
                    rawMmap.get("meanUs").asDouble(), rawMmap.get("meanUs").asDouble() / rawPwrite.get("meanUs").asDouble()));
        }
        double pgBest = 0;
        if (pgbench != null) {
            for (JsonNode p : pgbench.path("results")) {
                pgBest = Math.max(pgBest, p.get("tps").asDouble());
            }
        }
        for (JsonNode r : load.get("results")) {
            if (!r.get("name").asText().equals("walden local fdatasync") || r.get("payload").asInt() != 64
                    || r.get("committers").asInt() == 1 || !r.get("kind").asText().equals("threads")) {
                continue;
            }
            int n = r.get("committers").asInt();
            double perFlush = r.path("commitsPerFlush").asDouble();
            double rate = r.get("commitsPerSecond").asDouble();
            line.accept(String.format(Locale.ROOT, "| %d committers, LOCAL, 64 B: commits/flush ≥ 0.9 × N | %.1f = **%.2f N** | %s |",
                    n, perFlush, perFlush / n, perFlush >= 0.9 * n ? "met" : "not met"));
            if (pgBest > 0 && (n == 16 || n == 64)) {
                line.accept(String.format(Locale.ROOT, "| %d committers: commits/s ≥ 3 × PostgreSQL's best synchronous_commit=on tps | %,.0f/s vs %,.0f tps = **%.2f×** | %s |",
                        n, rate, pgBest, rate / pgBest, rate >= 3 * pgBest ? "met" : "not met"));
            }
        }
        if (pgbench != null && pgbench.has("skipped")) {
            line.accept("| PostgreSQL side by side | " + pgbench.get("skipped").asText() + " | skipped |");
        }
        JsonNode async1 = find("walden local fdatasync", 64, 1, "async");
        if (async1 != null && lone != null) {
            double r = async1.get("commitsPerSecond").asDouble() / lone.get("commitsPerSecond").asDouble();
            line.accept(String.format(Locale.ROOT, "| one asynchronous append in flight ≥ 0.8 × the blocking lone committer | %,d vs %,d/s = **%.2f×** | %s |",
                    async1.get("commitsPerSecond").asLong(), lone.get("commitsPerSecond").asLong(), r, r >= 0.8 ? "met" : "not met: note 2"));
        }
        JsonNode off = jmh.score("OffAppendBenchmark.waldenAppendOff", "200");
        JsonNode cq = jmh.score("OffAppendBenchmark.chronicleQueueWriteBytes");
        if (off != null && cq != null) {
            double r = off.get("score").asDouble() / cq.get("score").asDouble();
            line.accept(String.format(Locale.ROOT, "| OFF, 1 thread, 64 B: appends/s ≥ 3 × Chronicle Queue (JMH) | %.2f vs %.2f ops/µs = **%.2f×** | %s |",
                    off.get("score").asDouble(), cq.get("score").asDouble(), r, r >= 3 ? "met" : "not met: note 3"));
        }
        JsonNode offLoad = find("walden off fdatasync", 64, 1, "threads");
        JsonNode cqLoad = find("chronicle queue writeBytes", 64, 1, "peer");
        if (offLoad != null && cqLoad != null) {
            double r = offLoad.get("commitsPerSecond").asDouble() / cqLoad.get("commitsPerSecond").asDouble();
            line.accept(String.format(Locale.ROOT, "| OFF, 1 thread, 64 B: appends/s ≥ 3 × Chronicle Queue (load generator) | %,d vs %,d/s = **%.2f×** | %s |",
                    offLoad.get("commitsPerSecond").asLong(), cqLoad.get("commitsPerSecond").asLong(), r, r >= 3 ? "met" : "not met: note 3"));
        }
        JsonNode alloc = jmh.secondary("OffAppendBenchmark.waldenAppendOff", "gc.alloc.rate.norm");
        if (alloc != null) {
            line.accept(String.format(Locale.ROOT, "| OFF append allocates nothing (`-prof gc`) | %.3f B/op | %s |",
                    alloc.get("score").asDouble(), alloc.get("score").asDouble() < 1 ? "met" : "not met"));
        }
        JsonNode allocLocal = jmh.secondary("LoneCommitterBenchmark.waldenAppendLocal", "gc.alloc.rate.norm");
        JsonNode allocRaw = jmh.secondary("LoneCommitterBenchmark.rawWriteAndForce", "gc.alloc.rate.norm");
        if (allocLocal != null && allocRaw != null) {
            double walden = allocLocal.get("score").asDouble();
            line.accept(String.format(Locale.ROOT, "| blocking LOCAL append allocates nothing (`-prof gc`) | %.1f B/op; the raw force loop: %.1f B/op | %s |",
                    walden, allocRaw.get("score").asDouble(),
                    walden <= allocRaw.get("score").asDouble() + 1 ? "met: nothing beyond what the JDK's `FileChannel.force` allocates (note 4)"
                            : "see note 4: -prof gc counts every thread; on the committing thread alone it is ~0 (AllocationTest)"));
        }
        line.accept("");
    }

    /** What the table's figures owe to how the log works (the notes its verdicts refer to). */
    private void notes() {
        line.accept("1. **The write path.** Appenders copy records into the WAL buffers (a ring of native memory, 32 MiB by default);");
        line.accept("   the flush leader writes the published range into the segment files with `pwrite` and then forces it, as");
        line.accept("   PostgreSQL's XLogWrite does. A lone commit therefore costs one `pwrite` + one `fdatasync`, the raw loop's");
        line.accept("   cost: the interleaved row compares the two in alternating 200 ms slices, because this machine's disk drifts");
        line.accept("   by 2-3× within minutes and separate windows (the load table) mix that drift into the ratio.");
        line.accept("2. **One asynchronous append in flight** is flushed by the background writer, woken by `appendAsync`, and");
        line.accept("   completed from there: one hand-off each way. The writer's flush is not counted as a commit of its own (it");
        line.accept("   was, and the leader then waited up to half a flush for a second commit that never came: 0.56× before).");
        line.accept("3. **OFF appends** copy into the WAL buffers and return; the background writer writes them into the files within");
        line.accept("   `offWriteDelay` (2 ms) and forces them within `writerDelay` (200 ms), which Chronicle Queue does not do. JMH");
        line.accept("   measures the append itself (each iteration stays within one preallocated 1 GiB segment). The load generator");
        line.accept("   measures it sustained: there every byte is written twice (segments are preallocated with zeros, as");
        line.accept("   PostgreSQL does, so that `fdatasync` suffices) and forced within 200 ms, so past a few seconds Walden's OFF");
        line.accept("   rate is bounded by the disk's write bandwidth, while Chronicle Queue's stores into a sparse mapping that");
        line.accept("   nothing forces are not. Both time one append in 64 (two clock reads would cost more than the append).");
        line.accept("4. **Allocation.** `-prof gc` divides the bytes allocated by *every* thread (JMH's harness, Walden's background");
        line.accept("   writer and segment preparer) by the operations. Counted exactly on the committing thread (HotSpot's per-thread");
        line.accept("   counter, `AllocationTest` in wal-core), a blocking LOCAL append and an OFF append allocate ~0 B/op.");
        line.accept("");
    }

    /** Walden beside pgbench, client count by client count, and the plot; nothing when PostgreSQL was not measured. */
    private void againstPostgreSQL() {
        if (pgbench == null || pgbench.path("results").size() == 0) {
            return;
        }
        line.accept("### Against PostgreSQL (same run, same file system)");
        line.accept("");
        line.accept(pgbench.path("version").asText() + ": `pgbench` running one `INSERT` of a 64-byte `bytea` per");
        line.accept("transaction, `synchronous_commit=on`, `wal_sync_method=fdatasync`, " + pgbench.path("seconds").asInt()
                + " s per client count, over a Unix socket (`wal-bench/pgbench.sh`). Walden: LOCAL appends of 64 B from N threads.");
        line.accept("");
        line.accept("| clients | PostgreSQL tps | Walden LOCAL commits/s | Walden / PostgreSQL |");
        line.accept("|---|---|---|---|");
        for (JsonNode p : pgbench.path("results")) {
            int c = p.get("clients").asInt();
            JsonNode w = find("walden local fdatasync", 64, c, "threads");
            line.accept(String.format(Locale.ROOT, "| %d | %,.0f | %s | %s |", c, p.get("tps").asDouble(),
                    w == null ? "-" : String.format(Locale.ROOT, "%,d", w.get("commitsPerSecond").asLong()),
                    w == null ? "-" : String.format(Locale.ROOT, "%.2f×", w.get("commitsPerSecond").asDouble() / p.get("tps").asDouble())));
        }
        line.accept("");
        line.accept("![commits/s against committers, log-log](benchmarks-commits.svg)");
        line.accept("");
    }

    /** commits/s against committers on log-log axes: Walden LOCAL, PostgreSQL, N × the raw write+fdatasync floor. */
    String plot() {
        List<double[]> walden = embeddedLocal();
        List<double[]> floor = new ArrayList<>();
        JsonNode raw = find("raw pwrite+fdatasync", 64, 1, "baseline");
        if (raw != null) {
            for (double[] w : walden) {
                floor.add(new double[] {w[0], w[0] * raw.get("commitsPerSecond").asDouble()});
            }
        }
        return new LogLogPlot("committers (clients)", "durable commits/s", 1, 256, 100, 1e7)
                .add("Walden LOCAL", "#1f77b4", 0, walden)
                .add("PostgreSQL", "#d62728", 1, pgbenchTps())
                .add("N × raw write+fdatasync", "#999999", 2, floor)
                .svg();
    }

    /** Walden's embedded LOCAL commits/s by committer threads, 64 B: {committers, commits/s}. */
    List<double[]> embeddedLocal() {
        List<double[]> walden = new ArrayList<>();
        for (JsonNode r : load.get("results")) {
            if (r.get("name").asText().equals("walden local fdatasync") && r.get("payload").asInt() == 64
                    && r.get("kind").asText().equals("threads")) {
                walden.add(new double[] {r.get("committers").asDouble(), r.get("commitsPerSecond").asDouble()});
            }
        }
        return walden;
    }

    /** pgbench's tps by clients: {clients, tps}; empty when PostgreSQL was not measured. */
    List<double[]> pgbenchTps() {
        List<double[]> pg = new ArrayList<>();
        if (pgbench != null) {
            for (JsonNode p : pgbench.path("results")) {
                pg.add(new double[] {p.get("clients").asDouble(), p.get("tps").asDouble()});
            }
        }
        return pg;
    }

    void writeLoadTable() {
        line.accept("## Commit throughput and latency (load generator)");
        line.accept("");
        line.accept("Committers are threads appending back to back (`threads`) or asynchronous appends kept in flight by one");
        line.accept("thread (`async`). Latency is per commit, from the call to its return (or the future's completion).");
        line.accept("`cpu` is the process's CPU time over wall time, in cores.");
        line.accept("");
        line.accept("| scenario | kind | sync | payload | committers | commits/s | commits/flush | p50 µs | p99 µs | p99.9 µs | cpu |");
        line.accept("|---|---|---|---|---|---|---|---|---|---|---|");
        for (JsonNode r : load.get("results")) {
            if (r.get("kind").asText().equals("interleaved")) {
                continue; // in the targets
            }
            line.accept(String.format(Locale.ROOT, "| %s | %s | %s | %d B | %d | %,d | %s | %d | %d | %d | %.2f |",
                    r.get("name").asText(), r.get("kind").asText(),
                    r.get("syncMethod").isNull() ? "-" : r.get("syncMethod").asText().toLowerCase(Locale.ROOT),
                    r.get("payload").asInt(), r.get("committers").asInt(), r.get("commitsPerSecond").asLong(),
                    r.get("commitsPerFlush").isNull() ? "-" : r.get("commitsPerFlush").asText(),
                    r.get("p50us").asLong(), r.get("p99us").asLong(), r.get("p999us").asLong(), r.get("cpuCores").asDouble()));
        }
        line.accept("");
    }

    private JsonNode find(String name, int payload, int committers, String kind) {
        for (JsonNode r : load.get("results")) {
            if (r.get("name").asText().equals(name) && r.get("payload").asInt() == payload
                    && r.get("committers").asInt() == committers && r.get("kind").asText().equals(kind)) {
                return r;
            }
        }
        return null;
    }
}
