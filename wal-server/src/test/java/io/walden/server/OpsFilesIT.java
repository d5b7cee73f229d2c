package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.walden.server.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The operators' files in {@code ops/} hold to what the server exports: every metric the Grafana dashboard queries
 * is in the scrape of a running primary (with a replica, an archive and a cursor, so that every family exists), and
 * every metric an alert rule reads is in docs/operations.md's table of meters.
 */
class OpsFilesIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path OPS = Path.of("..", "ops");
    /** A metric name in a PromQL expression: Walden's, and the disk gauges of the data directory. */
    private static final Pattern METRIC = Pattern.compile("\\b((?:walden|disk)_[a-z_]+)\\b");

    @TempDir
    Path work;

    @Test
    void everyMetricTheDashboardQueriesIsOneTheServerExports() throws Exception {
        Set<String> queried = new TreeSet<>();
        JsonNode dashboard = JSON.readTree(OPS.resolve("grafana/walden.json").toFile());
        for (JsonNode panel : dashboard.get("panels")) {
            for (JsonNode target : panel.get("targets")) {
                queried.addAll(metricsIn(target.get("expr").asText()));
            }
        }
        for (JsonNode variable : dashboard.at("/templating/list")) {
            queried.addAll(metricsIn(variable.get("query").asText()));
        }
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
            Set<String> exported = Set.of();
            for (long deadline = System.nanoTime() + 30_000_000_000L; System.nanoTime() < deadline; Thread.sleep(100)) {
                exported = exported(primary.get("/metrics").body());
                if (exported.containsAll(queried)) {
                    break;
                }
            }
            assertThat(exported).containsAll(queried);
        }
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

    /** The metric names of a Prometheus text scrape (every sample's name, suffixes included). */
    private static Set<String> exported(String scrape) {
        Set<String> names = new TreeSet<>();
        for (String line : scrape.split("\n")) {
            if (!line.startsWith("#") && !line.isBlank()) {
                names.add(line.split("[{ ]", 2)[0]);
            }
        }
        return names;
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
