package io.walden.bench;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.Locale;
import java.util.function.Consumer;

/** The compression section of docs/benchmarks.md, from {@link CompressionLoad}'s JSON. */
final class CompressionReport {
    private final JsonNode results;
    private final String date;
    private final Consumer<String> line;

    CompressionReport(JsonNode compression, Consumer<String> line) {
        this.results = compression.get("results");
        this.date = compression.path("machine").path("date").asText();
        this.line = line;
    }

    private JsonNode codec(String name) {
        for (JsonNode r : results) {
            if (r.get("kind").asText().equals("compression") && r.get("compression").asText().equals(name)) {
                return r;
            }
        }
        return null;
    }

    void write() {
        JsonNode none = codec("none");
        JsonNode lz4 = codec("lz4");
        JsonNode zstd = codec("zstd");
        if (none == null || lz4 == null || zstd == null) {
            return;
        }
        line.accept("## Record compression");
        line.accept("");
        line.accept(String.format(Locale.ROOT, "`CompressionLoad` (wal-bench), run on %s: %,d JSON events of 200 B to 4 KiB (an order",
                date, none.get("events").asInt()));
        line.accept("service's events, fixed seed: ids, timestamps, customers, line items), appended to one log per codec. Stored");
        line.accept("bytes are what the log takes for the events (record headers, alignment and copies of the zstd dictionary included),");
        line.accept("appended after 10,000 earlier events of the same kind (another seed), as in a log that has been running; rates are durable");
        line.accept(String.format(Locale.ROOT, "`LOCAL` appends from %d committers, the codecs alternating in 1 s slices, median of the per-round",
                none.get("committers").asInt()));
        line.accept("ratios to `NONE` (this disk drifts too much for figures measured a minute apart).");
        line.accept("");
        line.accept("| target | measured | verdict |");
        line.accept("|---|---|---|");
        double raw = none.get("rawBytes").asDouble();
        double zstdOfJson = zstd.get("storedBytes").asDouble() / raw;
        JsonNode dictionary = null;
        for (JsonNode r : results) {
            if (r.get("kind").asText().equals("compression-dictionary")) {
                dictionary = r;
            }
        }
        line.accept(String.format(Locale.ROOT, "| `ZSTD` stores ≤ 0.4 × the JSON | %,d B for %,d B = **%.2f×** (%.2f × `NONE`'s log)%s | %s |",
                zstd.get("storedBytes").asLong(), none.get("rawBytes").asLong(), zstdOfJson, zstd.get("storedRatio").asDouble(),
                dictionary == null ? "" : String.format(Locale.ROOT, "; a dictionary trained outside the log on a fifth of the events: %.2f × `NONE`",
                        dictionary.get("storedRatio").asDouble()),
                zstdOfJson <= 0.4 ? "met" : "not met"));
        if (zstd.has("storedBytesWithoutDictionary")) {
            line.accept(String.format(Locale.ROOT, "| (`ZSTD` without its dictionary, `zstdDictionary(false)`) | %,d B = %.2f × the JSON | - |",
                    zstd.get("storedBytesWithoutDictionary").asLong(), zstd.get("storedBytesWithoutDictionary").asDouble() / raw));
            line.accept(String.format(Locale.ROOT, "| (`ZSTD` in a log just created: its first MiB are the samples) | %,d B = %.2f × the JSON | - |",
                    zstd.get("storedBytesFreshLog").asLong(), zstd.get("storedBytesFreshLog").asDouble() / raw));
        }
        rate(zstd, "ZSTD", 0.9);
        rate(lz4, "LZ4", 0.97);
        line.accept(String.format(Locale.ROOT, "| (`LZ4` stores) | %,d B = %.2f × the JSON | - |", lz4.get("storedBytes").asLong(),
                lz4.get("storedBytes").asDouble() / raw));
        line.accept("");
        line.accept("| codec | stored bytes | × NONE | LOCAL ×16 commits/s | median ratio | p25 | p75 |");
        line.accept("|---|---|---|---|---|---|---|");
        for (JsonNode r : results) {
            if (!r.get("kind").asText().equals("compression")) {
                continue;
            }
            line.accept(String.format(Locale.ROOT, "| %s | %,d | %.2f | %,d | %.2f | %.2f | %.2f |", r.get("compression").asText(),
                    r.get("storedBytes").asLong(), r.get("storedRatio").asDouble(), r.get("commitsPerSecond").asLong(),
                    r.get("medianRateRatio").asDouble(), r.get("p25RateRatio").asDouble(), r.get("p75RateRatio").asDouble()));
        }
        line.accept("");
        line.accept("**What the dictionary does.** Each record is compressed alone, so that any record can be read, replicated");
        line.accept(String.format(Locale.ROOT, "and recovered by itself. An event of %,d bytes (the mean here) carries little that repeats inside it: its structure repeats across",
                Math.round(raw / none.get("events").asDouble())));
        line.accept("events, and a lone record cannot refer to the one before. zstd's levels barely differ on such records, so the log");
        line.accept("compresses at level 1 by default (`zstdLevel`; the `zstd level 3` row is zstd's own default, measured in the same");
        line.accept("slices): it stores as much as level 3 for less CPU (measured in this run, record by record outside the log:");
        StringBuilder levels = new StringBuilder();
        for (JsonNode r : results) {
            if (r.get("kind").asText().equals("compression-level")) {
                levels.append(levels.length() == 0 ? "" : "; ").append(String.format(Locale.ROOT, "level %d: %.2f of the bytes in %.1f µs",
                        r.get("level").asInt(), r.get("payloadRatio").asDouble(), r.get("microsPerRecord").asDouble()));
            }
        }
        line.accept(levels + "). What the records share goes into");
        line.accept("a dictionary instead: the log trains one (16 KiB) on its first MiB of zstd payloads after it opens, and stores a copy of it");
        line.accept("before the first record compressed with it in every segment (docs/format.md, \"zstd dictionaries\"), so that any segment");
        line.accept("is readable alone: after truncation, on a replica, from the archive, in `dump`.");
        line.accept("");
    }

    private void rate(JsonNode r, String name, double target) {
        double ratio = r.get("medianRateRatio").asDouble();
        line.accept(String.format(Locale.ROOT, "| `%s`: `LOCAL` append rate, %d committers, ≥ %.2f × `NONE` | median **%.2f×** (p25 %.2f, p75 %.2f), %,d commits/s | %s |",
                name, r.get("committers").asInt(), target, ratio, r.get("p25RateRatio").asDouble(),
                r.get("p75RateRatio").asDouble(), r.get("commitsPerSecond").asLong(), ratio >= target ? "met" : "not met"));
    }
}
