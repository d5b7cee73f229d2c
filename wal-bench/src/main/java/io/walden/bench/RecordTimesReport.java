package io.walden.bench;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The "Record times" section of docs/benchmarks.md: what on-disk format 2's record times cost the append path, from
 * wal-bench/format-cost.sh (this build and the last build of format 1, alternating, in one session), and seek by time
 * against a full scan (TimeSeekBenchmark, in the same JMH run as the rest).
 */
final class RecordTimesReport {
    private final Path costDir;
    private final JmhReport jmh;
    private final Consumer<String> line;

    /** @param costDir format-cost.sh's output directory ({@code <build>-<round>.jmh.json}, {@code .load.json}) */
    RecordTimesReport(Path costDir, JmhReport jmh, Consumer<String> line) {
        this.costDir = costDir;
        this.jmh = jmh;
        this.line = line;
    }

    void write() throws IOException {
        JsonNode seek = jmh.score("TimeSeekBenchmark.lsnAt");
        JsonNode scan = jmh.score("TimeSeekBenchmark.fullScan");
        Map<String, List<double[]>> cost = appendCost();
        if (seek == null && cost.isEmpty()) {
            return;
        }
        line.accept("## Record times (on-disk format 2)");
        line.accept("");
        line.accept("Every record carries its append time: 8 bytes more per record. Targets: the append path within 3 % of");
        line.accept("format 1's rate (this build / the last build of format 1, alternated round by round by");
        line.accept("`wal-bench/format-cost.sh`, median of the rounds), and a seek by time that never scans the log.");
        line.accept("");
        if (!cost.isEmpty()) {
            line.accept("Measured " + Files.getLastModifiedTime(costDir.resolve("current-1.jmh.json")).toInstant()
                    .toString().substring(0, 16).replace('T', ' ') + " UTC, against the build of commit "
                    + Files.readString(costDir.resolve("baseline.commit")).trim() + ".");
            line.accept("");
            line.accept("| append | format 2 | format 1 | format 2 / format 1 (median of rounds) | rounds |");
            line.accept("|---|---|---|---|---|");
            for (Map.Entry<String, List<double[]>> e : cost.entrySet()) {
                List<Double> ratios = new ArrayList<>();
                List<Double> current = new ArrayList<>();
                List<Double> baseline = new ArrayList<>();
                for (double[] r : e.getValue()) {
                    current.add(r[0]);
                    baseline.add(r[1]);
                    ratios.add(r[0] / r[1]);
                }
                double ratio = median(ratios);
                line.accept(String.format(Locale.ROOT, "| %s | %,.0f | %,.0f | **%.3f** %s | %d |", e.getKey(),
                        median(current), median(baseline), ratio, ratio >= 0.97 ? "met" : "not met", ratios.size()));
            }
            line.accept("");
        }
        if (seek != null && scan != null) {
            double s = seek.get("score").asDouble();
            double f = scan.get("score").asDouble();
            line.accept(String.format(Locale.ROOT, "Seek by time on a log of %d segments of 64 KiB (TimeSeekBenchmark, random "
                    + "times, page cache): `Wal.lsnAt` %.1f µs against %,.0f µs for a reader scanning from the oldest record: "
                    + "**%.0f×** faster.", TimeSeekBenchmark.SEGMENTS, s, f, f / s));
            line.accept("");
        }
        List<JsonNode> first = jmh.runs("TimeSeekFirstUseBenchmark.firstSeekAfterOpen");
        if (!first.isEmpty()) {
            List<String> shapes = new ArrayList<>();
            for (JsonNode run : first) {
                String[] shape = run.path("params").path("shape").asText().split(":");
                JsonNode p = run.get("primaryMetric").path("scorePercentiles");
                shapes.add(String.format(Locale.ROOT, "%s segments of %d MiB: median %,.0f µs, worst %,.0f µs", shape[1],
                        Long.parseLong(shape[0]) >> 20, p.path("50.0").asDouble(), p.path("100.0").asDouble()));
            }
            line.accept("The worst case is the first seek after the log was opened, which first builds the page index of the "
                    + "segment holding the answer (TimeSeekFirstUseBenchmark, 64-byte records, page cache): "
                    + String.join("; ", shapes) + ". So the sidecar seeks (`from_time`) on a reader thread, never on an "
                    + "event loop.");
            line.accept("");
        }
    }

    /** Scenario → per round {this build's rate, format 1's rate}; empty when format-cost.sh did not run. */
    private Map<String, List<double[]>> appendCost() throws IOException {
        return BuildComparison.rounds(costDir);
    }

    private static double median(List<Double> values) {
        return BuildComparison.median(values);
    }
}
