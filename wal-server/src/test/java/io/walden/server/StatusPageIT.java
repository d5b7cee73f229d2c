package io.walden.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The status page loaded in headless Chromium (Debian's package; .ci/run installs it): what the browser
 * renders after the page's script ran, not just that GET / answers 200.
 */
class StatusPageIT {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");

    @TempDir
    Path work;

    @Test
    void shouldRenderThePositionsAndStatusInABrowser() throws Exception {
        assumeTrue(Files.isExecutable(CHROMIUM), "chromium is not installed (.ci/run installs it)");
        try (ServerProcess server = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort())) {
            for (int i = 0; i < 25; i++) {
                server.post("/v1/records?durability=local", ("record " + i).getBytes(StandardCharsets.UTF_8));
            }
            String flushed = new ObjectMapper().readTree(server.get("/admin/status").body()).get("flushed_lsn").asText();
            assertThat(server.get("/").headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/html"));

            String dom = render(server.uri("/").toString());
            assertThat(dom).contains("<td class=\"num\" id=\"flushed_lsn\">" + flushed + "</td>")
                    .contains("<td class=\"num\" id=\"insert_lsn\">" + flushed + "</td>")
                    .contains("primary · epoch 1 · durability on · sync fdatasync")
                    .contains("<div id=\"recovery\">created a new log</div>")
                    .contains("none connected")
                    .containsPattern("id=\"commit_rate\">\\d+<");
        }
    }

    private String render(String url) throws Exception {
        Path out = work.resolve("dom.html");
        Process p = new ProcessBuilder(List.of(CHROMIUM.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--user-data-dir=" + work.resolve("chrome"), "--virtual-time-budget=3000", "--dump-dom", url))
                .redirectOutput(out.toFile()).redirectError(work.resolve("chrome.err").toFile()).start();
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("chromium did not finish: " + Files.readString(work.resolve("chrome.err")));
        }
        return Files.readString(out);
    }
}
