package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Eventually;
import io.walden.server.contract.ContractCheckedClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The OCI image ({@code target/walden-image.tar}, built by Jib without a daemon, only under {@code -Pimage}: {@code mvn
 * -B verify -Pimage}): its configuration as any runtime reads it, and the image itself running under podman (Debian's
 * package) where podman can run containers; where it cannot (no podman, or no user namespaces in a sandbox), that
 * part is skipped, saying why. Without the profile (the {@code walden.image} property unset) both tests are skipped.
 */
class ImageIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String VERSION = System.getProperty("walden.version");
    /** Set by the image profile only, which also builds it: then the image must be there. */
    private static final String IMAGE_PROPERTY = System.getProperty("walden.image");
    private static final Path IMAGE = IMAGE_PROPERTY == null ? null : Path.of(IMAGE_PROPERTY);

    @TempDir
    Path work;

    @Test
    void theImageRunsWaldenServeAsAnUnprivilegedUserFromItsOwnJavaRuntime() throws Exception {
        imageBuilt();
        assertThat(run(work, 60, "tar", "xf", IMAGE.toAbsolutePath().toString()).exit).isZero();
        JsonNode manifest = JSON.readTree(work.resolve("manifest.json").toFile()).get(0);
        assertThat(manifest.get("RepoTags").toString()).contains("walden:" + VERSION);
        JsonNode config = JSON.readTree(work.resolve(manifest.get("Config").asText()).toFile()).get("config");
        assertThat(config.get("Entrypoint").get(0).asText()).isEqualTo("java");
        assertThat(config.get("Env").toString()).contains("PATH=/opt/java/bin");
        assertThat(config.get("Cmd").toString()).contains("serve").contains("/var/lib/walden/data");
        assertThat(config.get("User").asText()).isEqualTo("10001:10001");
        assertThat(config.get("Labels").get("org.opencontainers.image.version").asText()).isEqualTo(VERSION);
        // The runtime layer holds a Java and the dynamic loader it needs.
        List<String> files = new ArrayList<>();
        for (JsonNode layer : manifest.get("Layers")) {
            files.addAll(run(work, 60, "tar", "tzf", work.resolve(layer.asText()).toString()).output.lines().toList());
        }
        assertThat(files).anySatisfy(f -> assertThat(f).endsWith("opt/java/bin/java"))
                .anySatisfy(f -> assertThat(f).contains("ld-linux"));
    }

    @Test
    void theImageServesUnderPodman() throws Exception {
        imageBuilt();
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/podman")), "podman is not installed (apt-get install podman)");
        String image = load();
        try {
            Result probe = run(work, 120, "podman", "run", "--rm", "--network", "host", "--entrypoint", "/opt/java/bin/java",
                    image, "-version");
            assumeTrue(probe.exit == 0, "podman cannot run containers here: " + probe.output.strip());
            serves(image);
        } finally {
            run(work, 60, "podman", "rmi", "-f", image);
        }
    }

    private void serves(String image) throws Exception {
        int port = ServerProcess.freePort();
        String name = "walden-image-it-" + ProcessHandle.current().pid();
        Result started = run(work, 60, "podman", "run", "-d", "--rm", "--network", "host", "--name", name, image,
                "serve", "--data-dir", "/var/lib/walden/data", "--http", "127.0.0.1:" + port, "--replication-listen", "none");
        assertThat(started.exit).as(started.output).isZero();
        try {
            HttpClient http = ContractCheckedClient.wrap(HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build());
            List<HttpResponse<String>> appended = new ArrayList<>(); // an IOException while not listening yet: tried again
            Eventually.holdsWithin(60, () -> appended.add(http.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/v1/records?durability=local"))
                    .POST(HttpRequest.BodyPublishers.ofString("from a container")).build(), HttpResponse.BodyHandlers.ofString())));
            assertThat(appended).as(run(work, 30, "podman", "logs", name).output).isNotEmpty();
            assertThat(appended.get(0).statusCode()).isEqualTo(200);
            JsonNode status = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/admin/status"))
                    .build(), HttpResponse.BodyHandlers.ofString()).body());
            assertThat(status.get("version").asText()).isEqualTo(VERSION);
        } finally {
            run(work, 60, "podman", "rm", "-f", name);
        }
    }

    private static void imageBuilt() {
        assumeTrue(IMAGE != null, "the image is built only with -Pimage (mvn -B verify -Pimage, on Linux)");
        assertThat(IMAGE).as("built by the image profile's package phase").exists();
    }

    /** Loads the tarball into podman's store; returns the image's name. */
    private String load() throws Exception {
        Result loaded = run(work, 120, "podman", "load", "-i", IMAGE.toAbsolutePath().toString());
        assumeTrue(loaded.exit == 0, "podman cannot load images here: " + loaded.output.strip());
        return "walden:" + VERSION;
    }

    private record Result(int exit, String output) {
    }

    private static Result run(Path dir, int seconds, String... command) throws Exception {
        Path output = Files.createTempFile(dir, "run", ".out");
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(output.toFile()).start();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return new Result(-1, String.join(" ", command) + " did not finish in " + seconds + " s: "
                    + Files.readString(output, StandardCharsets.UTF_8));
        }
        return new Result(p.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
    }
}
