package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The status page loaded in headless Chromium (Debian's package; .ci/run installs it): what the browser renders
 * after the page's script ran (its DOM), and what it shows (a screenshot: the red banner is there when, and only
 * when, an operator must act).
 */
class StatusPageIT {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path work;

    @BeforeEach
    void needsChromium() {
        assumeTrue(Files.isExecutable(CHROMIUM), "chromium is not installed (.ci/run installs it)");
    }

    @Test
    void aHealthyServerShowsItsPositionsVersionCursorsAndSlotsWithNoBanner() throws Exception {
        try (ServerProcess server = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort())) {
            for (int i = 0; i < 25; i++) {
                server.post("/v1/records?durability=local", ("record " + i).getBytes(StandardCharsets.UTF_8));
            }
            assertThat(server.put("/v1/cursors/billing", "{\"lsn\":\"0/40\"}").statusCode()).isEqualTo(200);
            JsonNode status = JSON.readTree(server.get("/admin/status").body());
            String flushed = status.get("flushed_lsn").asText();
            assertThat(server.get("/").headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/html"));

            String dom = dom(server.uri("/").toString());
            assertThat(dom).contains("<td class=\"num\" id=\"flushed_lsn\">" + flushed + "</td>")
                    .contains("primary · epoch 1 · durability on · sync fdatasync")
                    .contains("id=\"version\" class=\"sub\">" + status.get("version").asText() + " · up ")
                    .contains("<div id=\"recovery\">created a new log</div>")
                    .contains("no synchronous policy")
                    .containsPattern("<td>billing</td><td>0/40</td><td>\\d+(\\.\\d+)? (B|KiB)</td>")
                    .containsPattern("id=\"bytes\">\\d+(\\.\\d+)? (B|KiB)<")
                    .as("the records kept, beside what the whole segment files take")
                    .containsPattern("id=\"segment_files_bytes\">(64\\.0|128|192) MiB on disk<")
                    .contains("cursor billing (from 0/40")
                    .containsPattern("id=\"commit_rate\">\\d+<")
                    .contains("not archiving");
            assertThat(bannerPixels(screenshot(server.uri("/").toString()))).as("red banner pixels").isZero();
        }
    }

    @Test
    void theServerSectionShowsTheDataDirectoryTheDiskTheListenAddressesAndThatATokenIsRequired() throws Exception {
        int port = ServerProcess.freePort();
        int replicationPort = ServerProcess.freePort();
        Path data = work.resolve("data");
        try (ServerProcess server = ServerProcess.start(work, data, port, "--auth-token", "secret-token",
                "--replication-listen", "127.0.0.1:" + replicationPort, "--replication-secret", "replica-secret")) {
            String dom = dom(server.uri("/").toString());
            assertThat(dom).contains("id=\"data_dir\">" + data.toAbsolutePath() + "<")
                    .containsPattern("id=\"disk\">\\d+(\\.\\d+)? [KMGTP]?i?B used, <span class=\"(bad)?\">"
                            + "\\d+(\\.\\d+)? [KMGTP]?i?B free</span> of \\d+(\\.\\d+)? [KMGTP]?i?B<")
                    .contains("id=\"listen_http\">http://127.0.0.1:" + port + "<")
                    .contains("id=\"listen_replication\">127.0.0.1:" + replicationPort + "<")
                    .contains("id=\"auth_token\">required by every endpoint but the read-only ones<")
                    .doesNotContain("secret-token").doesNotContain("replica-secret");
        }
    }

    @Test
    void theFirstContentComesWithThePageNotFromAFetch() throws Exception {
        Path saved = work.resolve("page.html");
        String flushed;
        try (ServerProcess server = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort())) {
            server.post("/v1/records?durability=local", "one".getBytes(StandardCharsets.UTF_8));
            flushed = JSON.readTree(server.get("/admin/status").body()).get("flushed_lsn").asText();
            Files.writeString(saved, server.get("/").body());
        }
        // The server is gone: every fetch fails, so what renders came with the page.
        String dom = dom(saved.toUri().toString());
        assertThat(dom).contains("<td class=\"num\" id=\"flushed_lsn\">" + flushed + "</td>")
                .contains("primary · epoch 1")
                .contains("Cannot reach the server");
    }

    @Test
    void aBannerSaysSoWhenDurableCommitsHaveWaitedForTheirReplicasForSeconds() throws Exception {
        try (ServerProcess server = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort(),
                "--sync-replicas", "FIRST 1 (r1)")) {
            // An `on` commit that waits for a replica that never comes.
            CompletableFuture<HttpResponse<String>> waiting = server.http.sendAsync(HttpRequest.newBuilder(
                    server.uri("/v1/records?durability=on")).POST(HttpRequest.BodyPublishers.ofString("stuck")).build(),
                    HttpResponse.BodyHandlers.ofString());
            waitUntil(20, () -> JSON.readTree(server.get("/admin/status").body()).get("remote_wait_oldest_ms").asLong() > 5500);
            String dom = dom(server.uri("/").toString());
            assertThat(dom).contains("Durable commits have waited").contains("FIRST 1 (r1)")
                    .contains("not satisfied: remote commits wait");
            assertThat(bannerPixels(screenshot(server.uri("/").toString()))).as("red banner pixels").isGreaterThan(5_000);
            assertThat(waiting).isNotDone();
        }
    }

    /** Pixels of the banner's red (#c00) in the top of the page. */
    private static int bannerPixels(BufferedImage image) {
        int n = 0;
        for (int y = 0; y < Math.min(200, image.getHeight()); y++) {
            for (int x = 0; x < image.getWidth(); x++) {
                int rgb = image.getRGB(x, y) & 0xffffff;
                int r = rgb >> 16, g = (rgb >> 8) & 0xff, b = rgb & 0xff;
                if (r > 0xb0 && g < 0x30 && b < 0x30) {
                    n++;
                }
            }
        }
        return n;
    }

    private String dom(String url) throws Exception {
        Path out = work.resolve("dom.html");
        chromium(out, "--dump-dom", url);
        return Files.readString(out);
    }

    private BufferedImage screenshot(String url) throws Exception {
        Path png = work.resolve("page.png");
        Files.deleteIfExists(png);
        chromium(work.resolve("screenshot.out"), "--screenshot=" + png, "--window-size=1200,900", "--hide-scrollbars", url);
        assertThat(png).exists();
        return ImageIO.read(png.toFile());
    }

    private void chromium(Path stdout, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(CHROMIUM.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--user-data-dir=" + work.resolve("chrome"), "--virtual-time-budget=3000"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectOutput(stdout.toFile())
                .redirectError(work.resolve("chrome.err").toFile()).start();
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("chromium did not finish: " + Files.readString(work.resolve("chrome.err")));
        }
    }
}
