package io.walden.server;

import io.walden.core.Eventually;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The {@code java -jar walden.jar} command the integration tests start their child JVMs with, with a class-data
 * sharing archive of the jar's classes (JDK 13+'s dynamic archive, made once per test run by a server started and
 * stopped for it): each of the suite's few hundred child JVMs then starts about half a second sooner (a server's start
 * to {@code /ready}: 1.3 s against 0.9 s here), which is most of what a child costs. The archive belongs to the jar it
 * was made from (its path and time: {@code target/walden-cds/}); when it cannot be made, the children start without
 * one, as before. CDS's own messages are turned off, so that a child's output is what Walden prints.
 *
 * <p>Thread-safety: {@link #javaJar()} from any thread (the integration test classes run two at a time); the archive is
 * made once.
 */
final class JarClassArchive {
    private static final Object LOCK = new Object();
    /** The flags that use the archive, or none when there is none; null until the first call. */
    private static List<String> flags;

    private JarClassArchive() {
    }

    /**
     * {@code java [archive flags] -XX:TieredStopAtLevel=1 -Djava.io.tmpdir=... -jar walden.jar}: the start of every
     * command that runs the jar. The children live seconds: the optimising compiler (C2) spent most of its work on
     * start-up code it never ran again, a third of a server's CPU time to {@code /ready} (2.3 s against 1.6 s here), taken
     * from the other child JVMs on a machine of two cores. What the tests prove does not depend on which compiler ran the
     * code. A child's temporary directory is the test JVM's (the build's, see walden.test.tmpFlag in the parent pom):
     * a killed child leaves the native libraries it extracted there.
     */
    static List<String> javaJar() {
        List<String> cmd = new ArrayList<>();
        cmd.add(java());
        cmd.addAll(archiveFlags());
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
        cmd.add("-jar");
        cmd.add(WaldenJar.jar().toAbsolutePath().toString());
        return cmd;
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static List<String> archiveFlags() {
        synchronized (LOCK) {
            if (flags == null) {
                flags = make();
            }
            return flags;
        }
    }

    private static List<String> make() {
        try {
            Path jar = WaldenJar.jar().toAbsolutePath();
            Path dir = jar.resolveSibling("walden-cds");
            Path archive = dir.resolve(Files.getLastModifiedTime(jar).toMillis() + ".jsa");
            if (!Files.exists(archive)) {
                Files.createDirectories(dir);
                Path made = dir.resolve("making-" + ProcessHandle.current().pid() + ".jsa");
                record(jar, made);
                if (!Files.exists(made)) {
                    return List.of();
                }
                Files.move(made, archive, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            }
            return List.of("-XX:SharedArchiveFile=" + archive, "-Xshare:auto", "-Xlog:cds*=off");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        } catch (Exception e) {
            return List.of(); // no archive: the children start as they always did
        }
    }

    /** Starts a server that writes the archive at its exit, makes it serve a few requests, and stops it. */
    private static void record(Path jar, Path archive) throws Exception {
        Path data = Files.createTempDirectory("walden-cds");
        int port = ServerProcess.freePort();
        Process server = new ProcessBuilder(java(), "-XX:ArchiveClassesAtExit=" + archive, "-Xlog:cds*=off", "-jar",
                jar.toString(), "serve", "--data-dir", data.resolve("log").toString(), "--http", "127.0.0.1:" + port,
                "--replication-listen", "none").redirectErrorStream(true).redirectOutput(data.resolve("out").toFile()).start();
        try {
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            String base = "http://127.0.0.1:" + port;
            // An IOException while it is not listening yet: tried again.
            Eventually.holdsWithin(60, () -> !server.isAlive() || http.send(HttpRequest.newBuilder(URI.create(base + "/ready"))
                    .build(), HttpResponse.BodyHandlers.discarding()).statusCode() == 200);
            if (server.isAlive()) {
                http.send(HttpRequest.newBuilder(URI.create(base + "/v1/records"))
                        .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.discarding());
                http.send(HttpRequest.newBuilder(URI.create(base + "/admin/status")).build(),
                        HttpResponse.BodyHandlers.discarding());
            }
        } finally {
            server.destroy(); // SIGTERM: a clean exit, at which the archive is written
            if (!server.waitFor(60, TimeUnit.SECONDS)) {
                server.destroyForcibly();
            }
            try (var files = Files.walk(data)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }
}
