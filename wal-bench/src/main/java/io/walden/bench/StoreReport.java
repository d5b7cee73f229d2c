package io.walden.bench;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;

/** The "Many logs in one process" section of docs/benchmarks.md, from {@link StoreLoad}'s JSON. */
final class StoreReport {
    private final JsonNode store;
    private final Consumer<String> line;

    StoreReport(JsonNode store, Consumer<String> line) {
        this.store = store;
        this.line = line;
    }

    void write() {
        line.accept("## Many logs in one process (WalStore)");
        line.accept("");
        line.accept("`StoreLoad` (wal-bench), run on " + store.path("machine").path("date").asText() + ". Commits at `LOCAL`, "
                + "64 B, logs of 4 MiB segments. Target: N logs with one committer each reach at least 0.5 × one log with N "
                + "committers. N logs × 1 share their flushes through the store journal (the default; per flush = per "
                + "force of the journal); `own forces` is the same store with `sharedJournal(false)`, each log forcing its "
                + "own file; separate `Wal.open` logs are what an application had before stores.");
        line.accept("");
        line.accept("| committers | 1 log × N (commits/s, per flush) | N logs × 1 | N logs × 1, own forces | N separate Wals × 1 "
                + "| N logs / 1 log | own forces / 1 log | N logs / separate |");
        line.accept("|---|---|---|---|---|---|---|---|");
        Map<Integer, Map<String, JsonNode>> byN = new LinkedHashMap<>();
        for (JsonNode r : store.path("commits")) {
            byN.computeIfAbsent(r.get("committers").asInt(), k -> new LinkedHashMap<>()).put(r.get("name").asText(), r);
        }
        for (Map.Entry<Integer, Map<String, JsonNode>> e : byN.entrySet()) {
            JsonNode one = e.getValue().get("store: 1 log, N committers");
            JsonNode many = e.getValue().get("store: N logs, 1 committer each");
            JsonNode own = e.getValue().get("store, own forces: N logs, 1 committer each");
            JsonNode separate = e.getValue().get("separate Wals, 1 committer each");
            if (one == null || many == null || own == null || separate == null) {
                continue;
            }
            double oneRate = one.get("commitsPerSecond").asDouble();
            double ratio = many.get("commitsPerSecond").asDouble() / oneRate;
            line.accept(String.format(Locale.ROOT, "| %d | %s | %s | %s | %s | **%.2f×** %s | %.2f× | %.2f× |", e.getKey(),
                    cell(one), cell(many), cell(own), cell(separate), ratio, ratio >= 0.5 ? "met" : "not met",
                    own.get("commitsPerSecond").asDouble() / oneRate,
                    many.get("commitsPerSecond").asDouble() / separate.get("commitsPerSecond").asDouble()));
        }
        line.accept("");
        line.accept("Footprint of a store (logs of 1 MiB segments), as differences from before the store opened: threads, live "
                + "heap (after a collection), the JDK's direct buffers, Chronicle's native memory (the WAL buffers), resident "
                + "memory of the whole process (all of those, the segments' mapped pages and the JVM's own), open descriptors:");
        line.accept("");
        line.accept("| logs | create | open | when | threads | heap | direct | native | resident | descriptors |");
        line.accept("|---|---|---|---|---|---|---|---|---|---|");
        for (JsonNode f : store.path("footprint")) {
            line.accept(String.format(Locale.ROOT, "| %,d | %,d ms | %,d ms | idle | %s", f.get("logs").asInt(),
                    f.get("createMillis").asLong(), f.get("openMillis").asLong(), footprint(f.get("idle"))));
            line.accept("| | | | after one append each | " + footprint(f.get("afterOneAppendEach")));
        }
        line.accept("");
        busyLog();
    }

    /** One busy log among idle ones against alone in its store, both from the same run. */
    private void busyLog() {
        JsonNode alone = null;
        JsonNode among = null;
        int logs = 0;
        for (JsonNode f : store.path("footprint")) {
            if (f.get("logs").asInt() == 1) {
                alone = f.path("busyLog");
            } else {
                among = f.path("busyLog");
                logs = f.get("logs").asInt();
            }
        }
        if (alone == null || among == null || alone.isMissingNode() || among.isMissingNode()) {
            return;
        }
        line.accept(String.format(Locale.ROOT, "One busy log (64 B appends, the default 64 MiB segments) among %,d idle logs "
                + "of a store, against alone in its store, in the same run (target: at least 0.95 ×):", logs - 1));
        line.accept("");
        line.accept(String.format(Locale.ROOT, "| level | alone (appends/s) | among %,d idle | ratio |", logs - 1));
        line.accept("|---|---|---|---|");
        for (String level : new String[] {"off", "local"}) {
            double ratio = among.get(level).asDouble() / alone.get(level).asDouble();
            line.accept(String.format(Locale.ROOT, "| %s, one %s | %,d | %,d | **%.2f×** %s |", level.toUpperCase(Locale.ROOT),
                    level.equals("off") ? "thread" : "committer", alone.get(level).asLong(), among.get(level).asLong(), ratio,
                    ratio >= 0.95 ? "met" : "not met"));
        }
        line.accept("");
    }

    /** The cells of one footprint: threads, heap, direct, native, resident, descriptors. */
    private static String footprint(JsonNode m) {
        return String.format(Locale.ROOT, "%d | %s | %s | %s | %s | %,d |", m.get("threads").asInt(),
                mib(m.get("heapBytes")), mib(m.get("directBytes")), mib(m.get("nativeBytes")), mib(m.get("residentBytes")),
                m.get("descriptors").asLong());
    }

    private static String mib(JsonNode bytes) {
        return bytes == null ? "-" : String.format(Locale.ROOT, "%,.1f MiB", bytes.asLong() / 1048576.0);
    }

    private static String cell(JsonNode r) {
        return String.format(Locale.ROOT, "%,d (%s)", r.get("commitsPerSecond").asLong(), r.path("commitsPerFlush").asText());
    }
}
