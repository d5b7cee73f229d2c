package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an operator sees of a running {@code walden.jar}: the version it was built as (from the Maven project, in the
 * CLI, the status and the metrics), its log lines in the format and at the level asked for, and what
 * docs/operations.md tells an operator to do (dropping a dead replica's slot).
 */
class OperationsIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The Maven project's version, passed in by failsafe: what every place that shows the version must say. */
    private static final String VERSION = System.getProperty("walden.version");

    @TempDir
    Path work;

    @Test
    void theVersionFlagPrintsTheProjectVersion() throws Exception {
        WaldenJar.Run run = WaldenJar.run(work, "--version");
        assertThat(run.exitCode()).isZero();
        assertThat(VERSION).isNotBlank();
        assertThat(run.stdout()).startsWith("walden " + VERSION + "\n");
    }

    @Test
    void statusAndMetricsNameTheVersionAndHowLongTheServerHasRun() throws Exception {
        try (ServerProcess server = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort())) {
            JsonNode status = JSON.readTree(server.get("/admin/status").body());
            assertThat(status.get("version").asText()).isEqualTo(VERSION);
            assertThat(status.get("uptime_seconds").asLong()).isBetween(0L, 600L);
            assertThat(server.get("/metrics").body()).containsPattern(
                    "walden_build_info\\{[^}]*version=\"" + VERSION.replace(".", "\\.") + "\"[^}]*} 1(\\.0)?\n");
        }
    }

    @Test
    void jsonLogsAreOneObjectPerLineWithTimeLevelLoggerMessageAndTheLogAndMemberNames() throws Exception {
        String output;
        try (ServerProcess server = ServerProcess.start(work, work.resolve("orders"), ServerProcess.freePort(),
                "--log-format", "json", "--name", "member-a")) {
            server.post("/v1/records?durability=local", "x".getBytes(StandardCharsets.UTF_8));
            assertThat(server.terminate()).as("128 + SIGTERM: the JVM's status after its shutdown hooks ran").isEqualTo(143);
            output = server.output();
        }
        // Standard output and error, as a collector reads them: every line is JSON but warnings the JVM itself prints
        // (newer JDKs do, about Unsafe), which no Java code of the server can shape.
        List<String> lines = output.lines().filter(l -> !l.startsWith("WARNING: ")).toList();
        assertThat(lines).isNotEmpty();
        for (String line : lines) {
            JsonNode event = JSON.readTree(line);
            assertThat(Instant.parse(event.get("time").asText())).isBefore(Instant.now().plusSeconds(1));
            assertThat(event.get("time").asText()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z");
            assertThat(event.get("level").asText()).isIn("ERROR", "WARN", "INFO");
            assertThat(event.get("logger").asText()).isNotBlank();
            assertThat(event.get("log").asText()).isEqualTo("orders");
            assertThat(event.get("member").asText()).isEqualTo("member-a");
        }
        assertThat(lines).anySatisfy(l -> assertThat(JSON.readTree(l).get("message").asText()).contains("Opened Walden log"));
        assertThat(lines).as("the line serve writes on standard output once it serves").anySatisfy(l ->
                assertThat(JSON.readTree(l).get("message").asText()).startsWith("serving on http://127.0.0.1:"));
    }

    @Test
    void withJsonLogsAServerThatCannotStartSaysWhyInJson() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            WaldenJar.Run run = WaldenJar.run(work, "serve", "--data-dir", work.resolve("data").toString(), "--http",
                    "127.0.0.1:" + taken.getLocalPort(), "--replication-listen", "none", "--log-format", "json");
            assertThat(run.exitCode()).isEqualTo(2);
            assertThat(run.stdout()).isEmpty();
            List<String> lines = run.stderr().lines().filter(l -> !l.startsWith("WARNING: ")).toList();
            assertThat(lines).hasSize(1);
            JsonNode event = JSON.readTree(lines.get(0));
            assertThat(event.get("level").asText()).isEqualTo("ERROR");
            assertThat(event.get("message").asText()).startsWith("cannot listen on 127.0.0.1:" + taken.getLocalPort()
                    + " (--http): ");
        }
    }

    @Test
    void logLevelWarnLeavesOutTheInformationLines() throws Exception {
        String output;
        try (ServerProcess server = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort(),
                "--log-level", "warn")) {
            assertThat(server.terminate()).as("128 + SIGTERM: the JVM's status after its shutdown hooks ran").isEqualTo(143);
            output = server.output();
        }
        assertThat(output).contains("walden: serving on").doesNotContain(" INFO ").doesNotContain("Opened Walden log");
    }

    @Test
    void theStatusNamesTheDataDirectoryItsDiskTheListenAddressesTheTokenRuleAndWhatTheSegmentFilesTake() throws Exception {
        Path data = work.resolve("data");
        int port = ServerProcess.freePort();
        int replicationPort = ServerProcess.freePort();
        try (ServerProcess server = ServerProcess.start(work, data, port, "--segment-size", "1MiB",
                "--replication-listen", "127.0.0.1:" + replicationPort)) {
            server.post("/v1/records?durability=local", "x".repeat(40).getBytes(StandardCharsets.UTF_8));
            JsonNode status = status(server);
            assertThat(status.get("data_dir").asText()).isEqualTo(data.toAbsolutePath().toString());
            JsonNode disk = status.get("disk");
            assertThat(disk.get("total_bytes").asLong()).isEqualTo(data.toFile().getTotalSpace());
            assertThat(disk.get("used_bytes").asLong()).isBetween(1L, disk.get("total_bytes").asLong());
            assertThat(disk.get("free_bytes").asLong()).isBetween(0L, disk.get("total_bytes").asLong());
            assertThat(status.at("/listen/http").asText()).isEqualTo("http://127.0.0.1:" + port);
            assertThat(status.at("/listen/replication").asText()).isEqualTo("127.0.0.1:" + replicationPort);
            assertThat(status.get("auth_token_required").asBoolean()).isFalse();
            assertThat(status.get("bytes").asLong()).as("the records kept").isLessThan(1024);
            long files;
            try (var segments = java.nio.file.Files.list(data)) {
                files = segments.filter(f -> f.toString().endsWith(".wal")).mapToLong(f -> f.toFile().length()).sum();
            }
            assertThat(status.get("segment_files_bytes").asLong()).as("every segment file, allocated whole")
                    .isEqualTo(files).isEqualTo(status.get("segments").asLong() << 20);
        }
    }

    @Test
    void aDeadReplicasSlotIsDroppedOnTheRunningPrimaryAndNoLongerHoldsBackRetentionNorComesBackAfterARestart()
            throws Exception {
        Path data = work.resolve("primary");
        int replicationPort = ServerProcess.freePort();
        String[] primaryFlags = {"--segment-size", "64KiB", "--retention-bytes", "128KiB",
                "--replication-listen", "127.0.0.1:" + replicationPort};
        try (ServerProcess primary = ServerProcess.start(work, data, ServerProcess.freePort(), primaryFlags)) {
            try (ServerProcess replica = ServerProcess.start(work, work.resolve("replica"), ServerProcess.freePort(),
                    "--replicate-from", "127.0.0.1:" + replicationPort, "--name", "r1",
                    "--replication-listen", "127.0.0.1:" + ServerProcess.freePort())) {
                waitUntil(() -> status(primary).get("replicas").size() == 1);
                assertThat(primary.send("DELETE", "/admin/replication-slots?name=r1").body())
                        .as("a connected replica's slot").contains("\"replica_connected\"");
                replica.kill(); // the replica is gone for good
            }
            waitUntil(() -> status(primary).get("replicas").isEmpty());
            byte[] filler = "x".repeat(1000).getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i < 400; i++) { // six segments, all held for r1
                primary.post("/v1/records?durability=off", filler);
            }
            waitUntil(() -> status(primary).at("/retention/held_by").toString().contains("\"replication_slot\""));

            var dropped = primary.send("DELETE", "/admin/replication-slots?name=r1");
            assertThat(dropped.statusCode()).as(dropped.body()).isEqualTo(200);
            assertThat(JSON.readTree(dropped.body()).get("dropped").asText()).isEqualTo("r1");
            assertThat(status(primary).get("replication_slots")).isEmpty();
            waitUntil(() -> status(primary).at("/retention/removed_segments").asLong() > 0
                    && status(primary).at("/retention/held_by").isEmpty());
            assertThat(primary.send("DELETE", "/admin/replication-slots?name=r1").statusCode()).isEqualTo(404);
            assertThat(primary.terminate()).isEqualTo(143);
        }
        try (ServerProcess restarted = ServerProcess.start(work, data, ServerProcess.freePort(), primaryFlags)) {
            assertThat(status(restarted).get("replication_slots")).isEmpty();
        }
    }

    private static JsonNode status(ServerProcess server) throws Exception {
        return JSON.readTree(server.get("/admin/status").body());
    }
}
