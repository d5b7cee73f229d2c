package io.walden.server;

import io.walden.core.Eventually;
import io.walden.server.contract.ContractCheckedClient;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/** {@code java -jar walden.jar serve ...} in a child process, on a free loopback port, talked to over real HTTP. */
final class ServerProcess implements AutoCloseable {
    final int port;
    final Path log;
    private final Process process;
    final HttpClient http;
    private final String scheme;

    private ServerProcess(int port, Path log, Process process, String scheme, HttpClient http) {
        this.port = port;
        this.log = log;
        this.process = process;
        this.scheme = scheme;
        this.http = http;
    }

    /**
     * Ports handed out in this JVM, never handed out again: a test restarts its server on its own port (a kill, then a
     * start), and a test class running beside it must not be given that port in between. It was, once: its server
     * could not listen, its wait for {@code /ready} was answered by the other test's server, and its first request found
     * nobody listening ({@code ConnectException} in OperationsIT).
     */
    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

    /** A port free now and never handed out before in this JVM (see {@link #HANDED_OUT}). */
    static int freePort() throws IOException {
        while (true) {
            try (ServerSocket s = new ServerSocket(0)) {
                if (HANDED_OUT.add(s.getLocalPort())) {
                    return s.getLocalPort();
                }
            }
        }
    }

    static ServerProcess start(Path work, Path dataDir, int port, String... extra) throws Exception {
        return start(work, dataDir, port, "http",
                ContractCheckedClient.wrap(HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()), extra);
    }

    static ServerProcess start(Path work, Path dataDir, int port, String scheme, HttpClient client, String... extra)
            throws Exception {
        return startUnder(List.of(), work, dataDir, port, scheme, client, extra);
    }

    /** Starts the server with {@code launcher} before the java command (e.g. {@code fiu-run -x}, which execs it). */
    static ServerProcess startUnder(List<String> launcher, Path work, Path dataDir, int port, String scheme, HttpClient client,
                                    String... extra) throws Exception {
        List<String> cmd = new ArrayList<>(launcher);
        cmd.addAll(JarClassArchive.javaJar());
        cmd.addAll(List.of("serve", "--data-dir", dataDir.toString(), "--http", "127.0.0.1:" + port));
        cmd.addAll(List.of(extra));
        if (!cmd.contains("--replication-listen") && !cmd.contains("--coordinator")) {
            // Never the default port: tests must not collide with a running server. A replica too: it listens there once
            // promoted (and serves cascading replicas meanwhile).
            cmd.add("--replication-listen");
            cmd.add("127.0.0.1:" + freePort());
        }
        Path log = Files.createTempFile(work, "server", ".log");
        Process p = new ProcessBuilder(cmd).directory(work.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        ServerProcess server = new ServerProcess(port, log, p, scheme, client);
        server.awaitReady();
        return server;
    }

    private void awaitReady() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        boolean ready = Eventually.holdsWithin(60, () -> {
            if (!process.isAlive()) {
                throw new AssertionError("server exited with " + process.exitValue() + ": " + Files.readString(log));
            }
            return get("/ready").statusCode() == 200; // an IOException while it is not listening yet: tried again
        });
        if (!ready) {
            throw new AssertionError("server not ready: " + Files.readString(log));
        }
    }

    HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(uri(path)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> post(String path, byte[] body, String... headers) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).POST(HttpRequest.BodyPublishers.ofByteArray(body));
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> put(String path, String body) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(uri(path)).PUT(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** A request with a JSON body ({@code PATCH}, say), or none when {@code body} is null. */
    HttpResponse<String> send(String method, String path, String body) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(uri(path)).header("Content-Type", "application/json")
                        .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Every record the server holds, LSN → payload as UTF-8, read over the data API page by page. */
    Map<Long, String> records() throws Exception {
        return records("/v1/records");
    }

    /** Every record at {@code recordsPath} ({@code /v1/logs/orders/records}), LSN → payload as UTF-8, page by page. */
    Map<Long, String> records(String recordsPath) throws Exception {
        return RecordPages.read(this::get, recordsPath);
    }

    HttpResponse<String> send(String method, String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(uri(path)).method(method, HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    URI uri(String path) {
        return URI.create(scheme + "://127.0.0.1:" + port + path);
    }

    /** The server's process id (the java process itself when a launcher exec'd it). */
    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** kill -9. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** SIGTERM, without waiting for the process to end ({@link #terminate} waits). */
    void signalTerm() {
        process.destroy();
    }

    /** SIGTERM, then waits for the exit code. */
    int terminate() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("server did not stop on SIGTERM");
        }
        return process.exitValue();
    }

    String output() throws IOException {
        return Files.readString(log);
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }
}
