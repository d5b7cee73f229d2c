package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code walden append} and {@code walden tail} against a running {@code walden.jar serve}, as a shell user runs them.
 *
 * <p>Tests that need no flags of their own share one server started for the class: each appends records of its own
 * and tails from the first one's LSN (or, from the oldest record, expects what the log held before), under cursor
 * names of its own, so it passes alone and in any order; the tests of a class run one after another
 * ({@code junit.jupiter.execution.parallel.mode.default = same_thread}).
 */
class ConsoleToolsIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Lines a producer might send: scripts, emoji, a tab, a carriage return kept as a byte, an empty line, quotes. */
    private static final List<String> LINES = List.of("plain ascii", "naïve café — ünïcödé", "日本語のテキスト",
            "emoji 🚀🔥 and a tab\there", "windows line\r", "", "{\"json\": \"with \\\"quotes\\\"\"}", "last line");

    @TempDir
    static Path work;
    @AutoClose
    private static ServerProcess shared;

    @BeforeAll
    static void startSharedServer() throws Exception {
        shared = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort());
    }

    private static WaldenJar.Run walden(ServerProcess server, Path stdin, String... args) throws Exception {
        return WaldenJar.run(work, Map.of("WALDEN_URL", server.uri("").toString()), stdin, args);
    }

    /** The LSN {@code walden append} printed first. */
    private static String firstLsn(WaldenJar.Run appended) {
        assertThat(appended.exitCode()).as(appended.stderr()).isZero();
        return appended.stdout().lines().findFirst().orElseThrow();
    }

    private static Path input(List<String> lines) throws Exception {
        Path f = Files.createTempFile(work, "in", ".txt");
        Files.write(f, (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
        return f;
    }

    @Test
    void appendThenTailRoundTripsArbitraryUtf8LinesByteForByte() throws Exception {
        ServerProcess server = shared;
        Path in = input(LINES);
        WaldenJar.Run appended = walden(server, in, "append", "--batch", "3", "--durability", "local");
        assertThat(appended.exitCode()).as(appended.stderr()).isZero();
        assertThat(appended.stdout().lines().toList()).hasSize(LINES.size()).allMatch(l -> l.matches("[0-9A-F]+/[0-9A-F]+"));
        WaldenJar.Run tailed = walden(server, null, "tail", "--from", firstLsn(appended));
        assertThat(tailed.exitCode()).as(tailed.stderr()).isZero();
        assertThat(tailed.stdoutBytes()).isEqualTo(Files.readAllBytes(in));
    }

    @Test
    void nullSeparatedRecordsMayHoldNewlines() throws Exception {
        ServerProcess server = shared;
        Path in = work.resolve("records.bin");
        Files.write(in, "one\ntwo lines\u0000three\u0000".getBytes(StandardCharsets.UTF_8));
        WaldenJar.Run appended = walden(server, null, "append", "--file", in.toString(), "--null-separated");
        WaldenJar.Run tailed = walden(server, null, "tail", "--format", "json", "--from", firstLsn(appended));
        List<String> payloads = new ArrayList<>();
        for (String line : tailed.stdout().lines().toList()) {
            payloads.add(JSON.readTree(line).get("payload").asText());
        }
        assertThat(payloads).containsExactly("one\ntwo lines", "three");
    }

    @Test
    void aTailWithACursorResumesAfterWhatItPrinted() throws Exception {
        ServerProcess server = shared;
        String a = firstLsn(walden(server, input(List.of("a", "b", "c")), "append"));
        WaldenJar.Run first = walden(server, null, "tail", "--cursor", "reporting", "--from", a, "--page", "2");
        assertThat(first.stdout()).isEqualTo("a\nb\nc\n");
        walden(server, input(List.of("d", "e")), "append", "--quiet");
        WaldenJar.Run second = walden(server, null, "tail", "--cursor", "reporting");
        assertThat(second.exitCode()).as(second.stderr()).isZero();
        assertThat(second.stdout()).isEqualTo("d\ne\n");
        assertThat(walden(server, null, "tail", "--cursor", "reporting").stdout()).isEmpty();
    }

    @Test
    void aFollowingTailPrintsNewRecordsAndEndsCleanlyOnSigint() throws Exception {
        Assumptions.assumeTrue(new ProcessBuilder("env", "--default-signal=INT", "true").start().waitFor() == 0,
                "this env cannot reset SIGINT's disposition (GNU coreutils 8.31+ can): the SIGINT case is not run");
        ServerProcess server = shared;
        // A new cursor starts at the oldest record: first everything the log holds, then what arrives.
        String held = server.records().values().stream().map(p -> p + "\n").collect(Collectors.joining());
        Path out = work.resolve("tail.out");
        Path err = work.resolve("tail.err");
        // A shell starts background jobs with SIGINT ignored, and a JVM leaves an ignored SIGINT ignored: give
        // the tail the default disposition a user's terminal gives it (coreutils' env), whoever runs this test.
        List<String> cmd = new ArrayList<>(List.of("env", "--default-signal=INT"));
        cmd.addAll(JarClassArchive.javaJar());
        cmd.addAll(List.of("tail", "--follow", "--cursor", "live"));
        ProcessBuilder pb = new ProcessBuilder(cmd)
                .redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().put("WALDEN_URL", server.uri("").toString());
        Process tail = pb.start();
        try {
            walden(server, input(List.of("first", "second")), "append", "--quiet");
            waitUntil(() -> Files.readString(out).equals(held + "first\nsecond\n"));
            walden(server, input(List.of("third")), "append", "--quiet");
            waitUntil(() -> Files.readString(out).equals(held + "first\nsecond\nthird\n"));
            // The cursor has moved past everything printed: a read from it finds nothing.
            waitUntil(() -> JSON.readTree(server.get("/v1/records?cursor=live").body()).get("records").isEmpty());
            assertThat(new ProcessBuilder("kill", "-INT", Long.toString(tail.pid())).start().waitFor()).isZero();
            assertThat(tail.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(tail.exitValue()).as("128 + SIGINT").isEqualTo(130);
            assertThat(Files.readString(err)).isEmpty();
        } finally {
            tail.destroyForcibly();
        }
        // Restarted, it prints nothing again: the cursor moved past each printed page.
        assertThat(walden(server, null, "tail", "--cursor", "live").stdout()).isEmpty();
    }

    @Test
    void aTailWhoseReaderWentAwayStopsWithoutMovingItsCursorToTheEnd() throws Exception {
        ServerProcess server = shared;
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            lines.add("line " + i + " " + "x".repeat(40));
        }
        String from = firstLsn(walden(server, input(lines), "append"));
        // head takes one line and exits: the pipe closes while the tail still has pages to print.
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder("sh", "-c", "'" + java + "' -jar '" + WaldenJar.jar().toAbsolutePath()
                + "' tail --cursor piped --from " + from + " --page 1000 | head -n 1").redirectErrorStream(true)
                .redirectOutput(work.resolve("piped.out").toFile());
        pb.environment().put("WALDEN_URL", server.uri("").toString());
        Process p = pb.start();
        boolean stopped = p.waitFor(60, TimeUnit.SECONDS);
        p.destroyForcibly();
        assertThat(stopped).as("the tail stops once nothing reads it").isTrue();
        assertThat(Files.readString(work.resolve("piped.out"))).startsWith("line 0 ");
        // The cursor is where the last page the pipe took ended, or was never made: never at the end.
        HttpResponse<String> after = server.get("/v1/records?cursor=piped&limit=1");
        if (after.statusCode() != 404) {
            assertThat(JSON.readTree(after.body()).get("records")).as("records after the cursor").isNotEmpty();
        }
    }

    /**
     * {@code --log} appends to and prints a named log, with that log's cursor, through its own paths: nothing reaches
     * the log {@code default}; a log the server does not have is refused (404), nothing appended. Three jar runs on the
     * shared server (~2 s).
     */
    @Test
    void theLogFlagAppendsToAndTailsANamedLogWithItsOwnCursor() throws Exception {
        ServerProcess server = shared;
        HttpResponse<String> created = server.send("POST", "/v1/logs", "{\"name\": \"console\"}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        Path in = input(List.of("first order", "second order"));
        WaldenJar.Run appended = walden(server, in, "append", "--log", "console");
        assertThat(appended.exitCode()).as(appended.stderr()).isZero();
        WaldenJar.Run tailed = walden(server, null, "tail", "--log", "console", "--cursor", "billing");
        assertThat(tailed.exitCode()).as(tailed.stderr()).isZero();
        assertThat(tailed.stdoutBytes()).isEqualTo(Files.readAllBytes(in));
        // The log's cursor moved past what was printed: a read from it finds nothing.
        assertThat(JSON.readTree(server.get("/v1/logs/console/records?cursor=billing").body()).get("records")).isEmpty();
        assertThat(server.records()).doesNotContainValue("first order");
        WaldenJar.Run elsewhere = walden(server, in, "append", "--log", "absent");
        assertThat(elsewhere.exitCode()).isEqualTo(2);
        assertThat(elsewhere.stderr()).contains("line 1 and after not appended: 404 log_not_found");
    }

    @Test
    void aFailedAppendExitsNonZeroNamingTheFirstLineNotAppended() throws Exception {
        try (ServerProcess server = ServerProcess.start(work, work.resolve("small-batches"), ServerProcess.freePort(),
                "--max-batch-bytes", "1KiB")) {
            List<String> lines = new ArrayList<>(List.of("ok 1", "ok 2"));
            lines.add("x".repeat(2000)); // line 3: over the server's max-batch-bytes on its own
            lines.add("never sent");
            WaldenJar.Run run = walden(server, input(lines), "append", "--batch", "1");
            assertThat(run.exitCode()).isNotZero();
            assertThat(run.stderr()).contains("line 3").contains("payload_too_large");
            assertThat(run.stdout().lines().toList()).hasSize(2);
            JsonNode records = JSON.readTree(server.get("/v1/records").body()).get("records");
            assertThat(records).hasSize(2);
        }
    }

    @Test
    void theTokenComesFromTheEnvironmentOrTheFlag() throws Exception {
        try (ServerProcess server = ServerProcess.start(work, work.resolve("secured"), ServerProcess.freePort(),
                "--auth-token", "s3cret", "--replication-listen", "none")) {
            Path in = input(List.of("secured"));
            WaldenJar.Run refused = walden(server, in, "append");
            assertThat(refused.exitCode()).isNotZero();
            assertThat(refused.stderr()).contains("401 unauthorized");
            WaldenJar.Run withEnv = WaldenJar.run(work, Map.of("WALDEN_URL", server.uri("").toString(), "WALDEN_TOKEN", "s3cret"),
                    in, "append", "--quiet");
            assertThat(withEnv.exitCode()).as(withEnv.stderr()).isZero();
            WaldenJar.Run withFlag = walden(server, null, "tail", "--token", "s3cret");
            assertThat(withFlag.stdout()).isEqualTo("secured\n");
        }
    }

    @Test
    void bothToolsHaveHelp() throws Exception {
        for (String tool : List.of("append", "tail")) {
            WaldenJar.Run help = WaldenJar.run(work, tool, "--help");
            assertThat(help.exitCode()).isZero();
            assertThat(help.stdout()).contains("--url").contains("--token").contains("WALDEN_URL");
        }
    }
}
