package io.walden.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The table of {@code compare-builds.sh}: per scenario, this build's rate and the baseline's, each the median of the
 * rounds, and the median of the per-round ratios (this build / baseline; above 1 is faster). JMH latencies (sample
 * time) are turned into rates, so that every ratio reads the same way.
 *
 * <p>Usage: {@code BuildComparison OUT_DIR} (the directory of {@code <build>-<round>.jmh.json} and {@code .load.json}).
 */
public final class BuildComparison {
    private static final ObjectMapper JSON = new ObjectMapper();

    private BuildComparison() {
    }

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0]);
        Map<String, List<double[]>> rounds = rounds(dir);
        System.out.println("Against the build of commit " + Files.readString(dir.resolve("baseline.commit")).trim()
                + ", alternating round by round:");
        System.out.println();
        System.out.println("| scenario | this build | baseline | this / baseline (median of rounds) | rounds |");
        System.out.println("|---|---|---|---|---|");
        for (Map.Entry<String, List<double[]>> e : rounds.entrySet()) {
            List<Double> current = new ArrayList<>();
            List<Double> baseline = new ArrayList<>();
            List<Double> ratios = new ArrayList<>();
            for (double[] r : e.getValue()) {
                current.add(r[0]);
                baseline.add(r[1]);
                ratios.add(r[0] / r[1]);
            }
            System.out.printf(Locale.ROOT, "| %s | %,.0f | %,.0f | **%.3f** | %d |%n", e.getKey(), median(current),
                    median(baseline), median(ratios), ratios.size());
        }
    }

    /** Scenario → per round {this build's rate, the baseline's}. */
    static Map<String, List<double[]>> rounds(Path dir) throws IOException {
        Map<String, List<double[]>> out = new LinkedHashMap<>();
        for (int round = 1; Files.exists(dir.resolve("current-" + round + ".jmh.json")); round++) {
            Map<String, Double> current = rates(dir, round, "current");
            Map<String, Double> baseline = rates(dir, round, "baseline");
            for (Map.Entry<String, Double> e : current.entrySet()) {
                Double b = baseline.get(e.getKey());
                if (b != null && b > 0) {
                    out.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(new double[] {e.getValue(), b});
                }
            }
        }
        return out;
    }

    /** One build's rates in one round: each JMH benchmark's operations/s and CommitLoad's commits/s per scenario. */
    private static Map<String, Double> rates(Path dir, int round, String build) throws IOException {
        Map<String, Double> out = new LinkedHashMap<>();
        Path jmh = dir.resolve(build + "-" + round + ".jmh.json");
        if (Files.exists(jmh)) {
            for (JsonNode b : JSON.readTree(jmh.toFile())) {
                String name = b.get("benchmark").asText().replaceAll(".*\\.(\\w+\\.\\w+)$", "$1");
                double score = b.get("primaryMetric").get("score").asDouble();
                boolean throughput = "thrpt".equals(b.get("mode").asText());
                // µs units: ops/µs for throughput, µs/op for a sampled time
                out.put("JMH " + name + " (ops/s)", throughput ? score * 1e6 : 1e6 / score);
            }
        }
        Path load = dir.resolve(build + "-" + round + ".load.json");
        if (Files.exists(load)) {
            for (JsonNode r : JSON.readTree(load.toFile()).path("results")) {
                if (r.has("commitsPerSecond") && r.get("name").asText().startsWith("walden ")) {
                    // the threads' scenarios come first; the async ones of the same name and count are left out
                    out.putIfAbsent("CommitLoad " + r.get("name").asText().replace("walden ", "") + " ×"
                            + r.get("committers").asInt() + " (commits/s)", r.get("commitsPerSecond").asDouble());
                }
            }
        }
        return out;
    }

    static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
