package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Eventually;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The operators' files in {@code ops/} hold to what the server exports: every metric the Grafana dashboard queries
 * is in the scrape of a running primary (with a replica, an archive and a cursor, so that every family exists), with
 * the labels the query selects and groups by, and every metric an alert rule reads is in docs/operations.md's table of
 * meters.
 */
class OpsFilesIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path OPS = Path.of("..", "ops");
    /** A metric name in a PromQL expression: Walden's, and the disk gauges of the data directory. */
    private static final Pattern METRIC = Pattern.compile("\\b((?:walden|disk)_[a-z_]+)\\b");
    /** A label matcher in a selector or a scraped series: {@code name="value"}, {@code name=~"re"}, {@code name!="v"}. */
    private static final Pattern LABEL_MATCHER = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(?:=~|!~|!=|=)\\s*\"");

    @TempDir
    Path work;

    @Test
    void everyMetricTheDashboardQueriesIsOneTheServerExportsWithTheLabelsTheQuerySelectsAndGroupsBy() throws Exception {
        List<String> queries = dashboardQueries();
        Set<String> queried = new TreeSet<>();
        queries.forEach(q -> queried.addAll(metricsIn(q)));
        assertThat(queried).hasSizeGreaterThan(10);

        int replicationPort = ServerProcess.freePort();
        try (ServerProcess primary = ServerProcess.start(work, work.resolve("orders"), ServerProcess.freePort(),
                "--replication-listen", "127.0.0.1:" + replicationPort, "--sync-replicas", "FIRST 1 (r1)",
                "--archive-to", work.resolve("archive").toUri().toString());
             ServerProcess replica = ServerProcess.start(work, work.resolve("replica"), ServerProcess.freePort(),
                     "--replicate-from", "127.0.0.1:" + replicationPort, "--name", "r1")) {
            waitUntil(() -> JSON.readTree(primary.get("/admin/status").body()).get("replicas").size() == 1);
            assertThat(primary.post("/v1/records?durability=on", "x".getBytes()).statusCode()).isEqualTo(200);
            assertThat(primary.put("/v1/cursors/billing", "{\"lsn\":\"0/40\"}").statusCode()).isEqualTo(200);
            // Replication's meters appear once the replica has reported; poll, then say what is missing, if anything.
            Eventually.holds(() -> exported(primary.get("/metrics").body()).keySet().containsAll(queried));
            Map<String, Set<String>> exported = exported(primary.get("/metrics").body());
            assertThat(exported.keySet()).containsAll(queried);
            for (String query : queries) {
                Set<String> labels = new TreeSet<>(Set.of("instance", "job")); // what Prometheus adds to every series
                for (String metric : metricsIn(query)) {
                    labels.addAll(exported.get(metric));
                }
                assertThat(labelsIn(query)).as("the labels of %s", query).isSubsetOf(labels);
            }
        }
    }

    @Test
    void theDashboardShowsWhatHoldsRetentionBackByHolderAndTheSegmentsItRemoved() throws Exception {
        assertThat(dashboardQueries())
                .anySatisfy(q -> assertThat(q).contains("walden_retention_held_bytes").containsPattern("by \\([^)]*holder"))
                .anySatisfy(q -> assertThat(q).contains("walden_retention_removed_segments_total"));
    }

    @Test
    void everyMetricAnAlertReadsIsInTheOperatorsTableOfMeters() throws Exception {
        Set<String> read = metricsIn(Files.readString(OPS.resolve("prometheus/walden-alerts.yml")));
        String operations = Files.readString(Path.of("..", "docs", "operations.md"));
        assertThat(read).isNotEmpty();
        for (String metric : read) {
            String family = metric.replaceAll("_(bucket|count|sum)$", "");
            assertThat(operations).as(metric).contains("`" + family);
        }
    }

    /**
     * {@code promtool check rules} and {@code promtool test rules} (Debian's {@code prometheus} package, which
     * {@code .ci/run} installs): the rules parse, and each alert fires on the series that should fire it.
     */
    @Test
    void theAlertRulesPassPromtoolsCheckAndTheirUnitTests() throws Exception {
        Path promtool = Path.of("/usr/bin/promtool");
        Assumptions.assumeTrue(Files.isExecutable(promtool),
                "promtool is not installed (apt-get install prometheus; .ci/run installs it): the rules are not checked here");
        Path rules = OPS.resolve("prometheus").toAbsolutePath().normalize();
        for (String[] command : new String[][] {
                {promtool.toString(), "check", "rules", "walden-alerts.yml"},
                {promtool.toString(), "test", "rules", "walden-alerts.test.yml"}}) {
            Path output = work.resolve("promtool.out");
            Process p = new ProcessBuilder(command).directory(rules.toFile()).redirectErrorStream(true)
                    .redirectOutput(output.toFile()).start();
            if (!p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError(String.join(" ", command) + " did not finish in 60 s");
            }
            assertThat(p.exitValue()).as(String.join(" ", command) + ":\n" + Files.readString(output)).isZero();
        }
    }

    /** Every PromQL expression of the dashboard: its panels' queries and its variables'. */
    private static List<String> dashboardQueries() throws Exception {
        List<String> queries = new ArrayList<>();
        JsonNode dashboard = JSON.readTree(OPS.resolve("grafana/walden.json").toFile());
        for (JsonNode panel : dashboard.get("panels")) {
            for (JsonNode target : panel.get("targets")) {
                queries.add(target.get("expr").asText());
            }
        }
        for (JsonNode variable : dashboard.at("/templating/list")) {
            queries.add(variable.get("query").asText());
        }
        return queries;
    }

    /** The metric names of a Prometheus text scrape (every sample's name, suffixes included), with their label names. */
    private static Map<String, Set<String>> exported(String scrape) {
        Map<String, Set<String>> names = new TreeMap<>();
        for (String line : scrape.split("\n")) {
            if (!line.startsWith("#") && !line.isBlank()) {
                Set<String> labels = names.computeIfAbsent(line.split("[{ ]", 2)[0], n -> new TreeSet<>());
                int open = line.indexOf('{');
                if (open > 0) {
                    Matcher m = LABEL_MATCHER.matcher(line.substring(open, line.lastIndexOf('}') + 1));
                    while (m.find()) {
                        labels.add(m.group(1));
                    }
                }
            }
        }
        return names;
    }

    /**
     * The label names a PromQL expression selects on ({@code {log=~"$log"}}) or groups and matches by ({@code by (...)},
     * {@code on (...)}, {@code label_values(metric, label)}'s label): each must be one the series carry, or the panel is
     * empty.
     */
    private static Set<String> labelsIn(String promql) {
        Set<String> labels = new TreeSet<>();
        Matcher selector = Pattern.compile("\\{([^}]*)}").matcher(promql);
        while (selector.find()) {
            Matcher m = LABEL_MATCHER.matcher(selector.group());
            while (m.find()) {
                labels.add(m.group(1));
            }
        }
        Matcher grouping = Pattern.compile("\\b(?:by|on|without|ignoring|group_left|group_right)\\s*\\(([^)]*)\\)").matcher(promql);
        while (grouping.find()) {
            for (String label : grouping.group(1).split(",")) {
                if (!label.isBlank()) {
                    labels.add(label.strip());
                }
            }
        }
        Matcher values = Pattern.compile("label_values\\([^,)]*,\\s*(\\w+)\\s*\\)").matcher(promql);
        while (values.find()) {
            labels.add(values.group(1));
        }
        return labels;
    }

    private static Set<String> metricsIn(String promql) {
        Set<String> names = new TreeSet<>();
        Matcher m = METRIC.matcher(promql);
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }
}
