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

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an operator sees of a running {@code walden.jar}: the version it was built as (from the Maven project, in the
 * CLI, the status and the metrics) and its log lines in the format and at the level asked for.
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
}
