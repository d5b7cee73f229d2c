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
        line.accept("Footprint of a store (logs of 1 MiB segments; differences from before the store opened: threads, resident "
                + "memory of the whole process, open descriptors):");
        line.accept("");
        line.accept("| logs | create | open | threads | resident | descriptors | after one append each: resident | descriptors |");
        line.accept("|---|---|---|---|---|---|---|---|");
        for (JsonNode f : store.path("footprint")) {
            JsonNode idle = f.get("idle");
            JsonNode busy = f.get("afterOneAppendEach");
            line.accept(String.format(Locale.ROOT, "| %,d | %,d ms | %,d ms | %d | %,d MiB | %,d | %,d MiB | %,d |",
                    f.get("logs").asInt(), f.get("createMillis").asLong(), f.get("openMillis").asLong(),
                    idle.get("threads").asInt(), idle.get("residentBytes").asLong() >> 20, idle.get("descriptors").asLong(),
                    busy.get("residentBytes").asLong() >> 20, busy.get("descriptors").asLong()));
        }
        line.accept("");
    }

    private static String cell(JsonNode r) {
        return String.format(Locale.ROOT, "%,d (%s)", r.get("commitsPerSecond").asLong(), r.path("commitsPerFlush").asText());
    }
}
