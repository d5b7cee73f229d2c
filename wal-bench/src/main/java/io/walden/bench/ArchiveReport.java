package io.walden.bench;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.Locale;
import java.util.function.Consumer;

/** The archiving section of docs/benchmarks.md, from {@link ArchiveLoad}'s JSON. */
final class ArchiveReport {
    private final JsonNode result;
    private final String date;
    private final Consumer<String> line;

    ArchiveReport(JsonNode archive, Consumer<String> line) {
        JsonNode results = archive.get("results");
        this.result = results != null && results.size() > 0 ? results.get(0) : null;
        this.date = archive.path("machine").path("date").asText();
        this.line = line;
    }

    void write() {
        if (result == null) {
            return;
        }
        line.accept("## Archiving");
        line.accept("");
        line.accept(String.format(Locale.ROOT, "`ArchiveLoad` (wal-bench), run on %s: what continuous archiving costs appends. %d committers",
                date, result.get("committers").asInt()));
        line.accept(String.format(Locale.ROOT, "append `CompressionLoad`'s JSON events at `LOCAL` to two logs with %d MiB segments, one of them",
                result.get("segmentBytes").asLong() >> 20));
        line.accept("archived to a directory on the same disk (every sealed segment copied, forced, read back and compared;");
        line.accept("the current one's head after 1 s). The logs alternate in 1 s slices; the median of the per-round ratios counts.");
        line.accept("The issue sets no target for it: this is what a user pays.");
        line.accept("");
        line.accept("| measured | archived | not archived | ratio (median, p25–p75) | segments archived |");
        line.accept("|---|---|---|---|---|");
        line.accept(String.format(Locale.ROOT, "| `LOCAL` ×%d commits/s | %,d | %,d | **%.2f×** (%.2f–%.2f) | %d |",
                result.get("committers").asInt(), result.get("archivedCommitsPerSecond").asLong(),
                result.get("plainCommitsPerSecond").asLong(), result.get("medianRateRatio").asDouble(),
                result.get("p25RateRatio").asDouble(), result.get("p75RateRatio").asDouble(), result.get("archivedSegments").asLong()));
        line.accept("");
    }
}
