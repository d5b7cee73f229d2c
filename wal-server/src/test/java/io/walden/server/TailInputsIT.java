package io.walden.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@code walden tail} (and {@code walden restore}) do with inputs they cannot or must not follow, run as a shell
 * user runs them against one {@code walden.jar serve} shared by the class: each refusal is one line and status 2,
 * said before anything is printed, and a cursor is never moved past records it did not print.
 */
class TailInputsIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path work;
    private static ServerProcess server;

    @BeforeAll
    static void start() throws Exception {
        server = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort(), "--durability", "local");
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    private static WaldenJar.Run walden(String... args) throws Exception {
        return WaldenJar.run(work, Map.of("WALDEN_URL", server.uri("").toString()), null, args);
    }

    /** Appends each payload as one record; returns their LSNs. */
    private static List<String> append(String... payloads) throws Exception {
        List<String> lsns = new ArrayList<>();
        for (String p : payloads) {
            lsns.add(JSON.readTree(server.post("/v1/records", p.getBytes(StandardCharsets.UTF_8)).body()).get("lsn").asText());
        }
        return lsns;
    }

    private static String cursorAt(String name) throws Exception {
        return JSON.readTree(server.get("/v1/cursors/" + name).body()).get("lsn").asText();
    }

    private static void assertOneLineRefusal(WaldenJar.Run run, String... mentions) {
        assertThat(run.exitCode()).as(run.stderr()).isEqualTo(2);
        assertThat(run.stdout()).as("nothing printed").isEmpty();
        assertThat(run.stderr().strip().lines()).as(run.stderr()).hasSize(1);
        assertThat(run.stderr()).contains(mentions).doesNotContain("Exception").doesNotContain("\tat ");
    }

    @Test
    void aTimeBeyondWhatARecordTimeHoldsIsOneLineNamingTheFlagAndTheRange() throws Exception {
        assertOneLineRefusal(walden("tail", "--from-time", "+300000-01-01T00:00:00Z"),
                "--from-time", "outside the times a record can hold", "-290308-12-21T19:59:06.000000Z");
        assertOneLineRefusal(walden("tail", "--from-time=-300000-01-01T00:00:00Z"), "--from-time", "outside");
        Files.createDirectories(work.resolve("archive"));
        assertOneLineRefusal(walden("restore", "--from", work.resolve("archive").toUri().toString(), "--data-dir",
                work.resolve("restored").toString(), "--until-time", "+300000-01-01T00:00:00Z"),
                "--until-time", "outside the times a record can hold");
    }

    @Test
    void anExistingCursorWithFromIsRefusedAndLaterResumesWithoutAGap() throws Exception {
        List<String> lsns = append("gap-a", "gap-b", "gap-c", "gap-d");
        assertThat(server.put("/v1/cursors/resuming", "{\"lsn\":\"" + lsns.get(1) + "\"}").statusCode()).isEqualTo(200);

        assertOneLineRefusal(walden("tail", "--cursor", "resuming", "--from", lsns.get(3)),
                "cursor resuming exists (at " + lsns.get(1) + ")", "drop --from");
        assertOneLineRefusal(walden("tail", "--cursor", "resuming", "--from-time", "2020-01-01T00:00:00Z"), "drop --from-time");
        assertThat(cursorAt("resuming")).as("not moved").isEqualTo(lsns.get(1));

        WaldenJar.Run resumed = walden("tail", "--cursor", "resuming");
        assertThat(resumed.exitCode()).as(resumed.stderr()).isZero();
        assertThat(resumed.stdout()).startsWith("gap-b\ngap-c\ngap-d\n");
    }

    @Test
    void aNewCursorStartsAtFromAndIsCreatedPastWhatItPrinted() throws Exception {
        List<String> lsns = append("new-a", "new-b", "new-c");
        WaldenJar.Run run = walden("tail", "--cursor", "created", "--from", lsns.get(1));
        assertThat(run.exitCode()).as(run.stderr()).isZero();
        assertThat(run.stdout()).startsWith("new-b\nnew-c\n");
        assertThat(walden("tail", "--cursor", "created").stdout()).as("resumes after what it printed").isEmpty();
    }

    @Test
    void aNameNoCursorCanHaveIsRefusedBeforeAnythingIsPrinted() throws Exception {
        append("never printed");
        assertOneLineRefusal(walden("tail", "--cursor", "bad/name"), "a cursor's name is", "'bad/name'");
    }

    @Test
    void aTailWithoutACursorWhoseReaderWentAwaySaysSoWithoutMentioningACursor() throws Exception {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
            lines.add("line " + i + " " + "x".repeat(40));
        }
        Path in = work.resolve("lines.txt");
        Files.write(in, lines);
        assertThat(WaldenJar.run(work, Map.of("WALDEN_URL", server.uri("").toString()), in, "append", "--quiet")
                .exitCode()).isZero();
        // head takes one line and exits: the pipe closes while the tail still has pages to print.
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path err = work.resolve("piped.err");
        ProcessBuilder pb = new ProcessBuilder("sh", "-c", "'" + java + "' -jar '" + WaldenJar.jar().toAbsolutePath()
                + "' tail --page 1000 2>'" + err + "' | head -n 1").redirectOutput(work.resolve("piped.out").toFile());
        pb.environment().put("WALDEN_URL", server.uri("").toString());
        Process p = pb.start();
        boolean stopped = p.waitFor(60, TimeUnit.SECONDS);
        p.destroyForcibly();
        assertThat(stopped).as("the tail stops once nothing reads it").isTrue();
        assertThat(Files.readString(err).strip()).isEqualTo("walden tail: standard output was closed: stopped");
    }
}
