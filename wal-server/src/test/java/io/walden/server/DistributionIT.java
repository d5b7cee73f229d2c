package io.walden.server;

import io.walden.core.Eventually;
import io.walden.server.contract.ContractCheckedClient;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The distribution as an operator installs it: {@code tar xf walden-<version>.tar.gz} and {@code bin/walden}, with
 * nothing but a JDK (this test's) on the machine.
 */
class DistributionIT {
    private static final String VERSION = System.getProperty("walden.version");

    @TempDir
    Path work;
    private Path home;

    @BeforeEach
    void unpack() throws Exception {
        Path tarball = Path.of(System.getProperty("walden.dist", "target/walden-" + VERSION + ".tar.gz"));
        assertThat(tarball).as("built by the package phase").exists();
        Process tar = new ProcessBuilder("tar", "xzf", tarball.toAbsolutePath().toString()).directory(work.toFile())
                .inheritIO().start();
        assertThat(tar.waitFor()).isZero();
        home = work.resolve("walden-" + VERSION);
    }

    @Test
    void theTarballHoldsTheLauncherTheJarTheConfigurationTheUnitTheReadmeAndTheLicence() {
        for (String file : List.of("bin/walden", "lib/walden.jar", "conf/walden.yaml", "systemd/walden.service",
                "README.md", "LICENSE")) {
            assertThat(home.resolve(file)).as(file).isRegularFile();
        }
        assertThat(Files.isExecutable(home.resolve("bin/walden"))).isTrue();
    }

    @Test
    void theTarballHoldsTheDocumentationAndTheMonitoringFilesAnOperatorNeeds() {
        for (String file : List.of("docs/operations.md", "docs/http-api.md", "docs/durability.md", "docs/replication.md",
                "docs/format.md", "ops/grafana/walden.json", "ops/prometheus/walden-alerts.yml")) {
            assertThat(home.resolve(file)).as(file).isRegularFile();
        }
    }

    @Test
    void theReadmeSaysHowToInstallFromTheTarballNotHowToBuildFromTheRepository() throws Exception {
        String readme = Files.readString(home.resolve("README.md"));
        assertThat(readme).contains("bin/walden serve").contains("systemd/walden.service").contains("conf/walden.yaml")
                .doesNotContain("mvn ").doesNotContain("wal-server/target");
    }

    @Test
    void everyRelativeLinkOfTheShippedReadmeAndDocsLeadsToAFileAndHeadingInTheTarball() throws Exception {
        ShippedLinks links = new ShippedLinks(home).checkMarkdown("README.md");
        try (var docs = Files.list(home.resolve("docs"))) {
            for (Path doc : docs.filter(d -> d.toString().endsWith(".md")).sorted().toList()) {
                links.checkMarkdown(home.relativize(doc).toString());
            }
        }
        assertThat(links.broken()).isEmpty();
    }

    @Test
    void everyFileTheConfigurationAndTheUnitNameIsInTheTarball() throws Exception {
        ShippedLinks links = new ShippedLinks(home).checkTreePaths("conf/walden.yaml").checkTreePaths("README.md")
                .checkInstalledPaths("systemd/walden.service");
        assertThat(links.broken()).isEmpty();
        assertThat(Files.readString(home.resolve("systemd/walden.service")))
                .containsPattern("(?m)^Documentation=.*file:///opt/walden/docs/operations\\.md");
    }

    @Test
    void theLauncherPrintsTheVersion() throws Exception {
        Result r = run(Map.of(), "--version");
        assertThat(r.exitCode).as(r.output).isZero();
        assertThat(r.output).startsWith("walden " + VERSION);
    }

    @Test
    void serveRunsWithNoFlagAndReadsTheShippedConfiguration() throws Exception {
        int port = ServerProcess.freePort();
        // The shipped file, edited as an operator would: free ports instead of 7400 and 7401 (a test must not take those).
        Path conf = home.resolve("conf/walden.yaml");
        Files.writeString(conf, Files.readString(conf) + "\nhttp: 127.0.0.1:" + port + "\nreplication-listen: 127.0.0.1:"
                + ServerProcess.freePort() + "\n");
        Path log = work.resolve("serve.log");
        ProcessBuilder pb = new ProcessBuilder(home.resolve("bin/walden").toString(), "serve").directory(work.toFile())
                .redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Process serve = pb.start();
        try {
            HttpClient http = ContractCheckedClient.wrap(HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build());
            List<HttpResponse<String>> appended = new ArrayList<>(); // an IOException while not listening yet: tried again
            Eventually.holdsWithin(60, () -> !serve.isAlive() || appended.add(http.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/v1/records"))
                    .POST(HttpRequest.BodyPublishers.ofString("hello")).build(), HttpResponse.BodyHandlers.ofString())));
            assertThat(appended).as(Files.readString(log)).isNotEmpty();
            assertThat(appended.get(0).statusCode()).isEqualTo(200);
            assertThat(appended.get(0).body()).contains("\"durability\":\"on\"");
        } finally {
            serve.destroy();
            if (!serve.waitFor(60, TimeUnit.SECONDS)) {
                serve.destroyForcibly();
                throw new AssertionError("bin/walden serve did not stop on SIGTERM: " + Files.readString(log));
            }
        }
        assertThat(serve.exitValue()).as(Files.readString(log)).isEqualTo(143); // 128 + SIGTERM, after a clean close
        assertThat(work.resolve("walden-data")).as("the default data directory, in the working directory").isDirectory();
    }

    @Test
    void theLauncherRefusesAJavaOlderThan17AndSaysWhy() throws Exception {
        Path fakeHome = work.resolve("old-java");
        Files.createDirectories(fakeHome.resolve("bin"));
        Path java = fakeHome.resolve("bin/java");
        Files.writeString(java, "#!/bin/sh\necho '    java.specification.version = 11' >&2\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        Result r = run(Map.of("JAVA_HOME", fakeHome.toString()), "--version");
        assertThat(r.exitCode).isEqualTo(1);
        assertThat(r.output).contains("Java 11").contains("needs Java 17 or newer");
    }

    private record Result(int exitCode, String output) {
    }

    private Result run(Map<String, String> env, String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of(home.resolve("bin/walden").toString()));
        cmd.addAll(List.of(args));
        Path output = Files.createTempFile(work, "run", ".out");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(work.toFile()).redirectErrorStream(true)
                .redirectOutput(output.toFile());
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        pb.environment().putAll(env);
        Process p = pb.start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", cmd) + " did not finish in 60 s: " + Files.readString(output));
        }
        return new Result(p.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
    }
}
