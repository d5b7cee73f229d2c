package io.walden.bench;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

/** The JMH section of docs/benchmarks.md, and the JMH figures the other sections quote, from JMH's JSON. */
final class JmhReport {
    private final JsonNode jmh;
    private final Consumer<String> line;

    /** @param jmh JMH's JSON: an array of runs, empty when JMH was not run */
    JmhReport(JsonNode jmh, Consumer<String> line) {
        this.jmh = jmh;
        this.line = line;
    }

    void write() {
        if (jmh.size() == 0) {
            return;
        }
        line.accept("## JMH");
        line.accept("");
        line.accept("| benchmark | params | mode | score | error | unit | alloc B/op |");
        line.accept("|---|---|---|---|---|---|---|");
        for (JsonNode b : jmh) {
            String name = b.get("benchmark").asText().replace("io.walden.bench.", "");
            JsonNode pm = b.get("primaryMetric");
            List<String> params = new ArrayList<>();
            b.path("params").fields().forEachRemaining(e -> params.add(e.getKey() + "=" + e.getValue().asText()));
            JsonNode alloc = secondaryMetric(b, "gc.alloc.rate.norm");
            line.accept(String.format(Locale.ROOT, "| %s | %s | %s | %.3f | %.3f | %s | %s |", name, String.join(", ", params),
                    b.get("mode").asText(), pm.get("score").asDouble(), pm.path("scoreError").asDouble(),
                    pm.get("scoreUnit").asText(), alloc == null ? "-" : String.format(Locale.ROOT, "%.3f", alloc.get("score").asDouble())));
        }
        line.accept("");
    }

    JsonNode score(String benchmark) {
        return score(benchmark, null);
    }

    /** The primary metric of a benchmark, optionally the run whose writerDelayMs parameter has this value. */
    JsonNode score(String benchmark, String writerDelayMs) {
        for (JsonNode b : jmh) {
            if (b.get("benchmark").asText().endsWith(benchmark) && (writerDelayMs == null
                    || !b.path("params").has("writerDelayMs") || b.path("params").path("writerDelayMs").asText().equals(writerDelayMs))) {
                return b.get("primaryMetric");
            }
        }
        return null;
    }

    /** Every run of {@code benchmark} (one per parameter set), as JMH's JSON gives it. */
    List<JsonNode> runs(String benchmark) {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode b : jmh) {
            if (b.get("benchmark").asText().endsWith(benchmark)) {
                out.add(b);
            }
        }
        return out;
    }

    /** A secondary metric of the first run of {@code benchmark} that has it; null when none has. */
    JsonNode secondary(String benchmark, String metric) {
        for (JsonNode b : jmh) {
            if (b.get("benchmark").asText().endsWith(benchmark)) {
                JsonNode s = secondaryMetric(b, metric);
                if (s != null) {
                    return s;
                }
            }
        }
        return null;
    }

    /** A secondary metric of one run, under either name JMH's JSON may give it (a leading "·" or none); null if absent. */
    private static JsonNode secondaryMetric(JsonNode run, String metric) {
        JsonNode s = run.path("secondaryMetrics");
        for (String key : new String[] {"·" + metric, metric}) {
            if (s.has(key)) {
                return s.get(key);
            }
        }
        return null;
    }
}
