package io.walden.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The server {@link HttpLoad} drives, as a child process: {@code java -jar walden.jar serve} on a fresh log and a free
 * port, or the C floor; stopped (SIGTERM) at the end.
 */
final class ServerProcess implements AutoCloseable {
    private final Process process;
    final InetSocketAddress address;
    /** Where it accepts replicas (null for the C floor). */
    final InetSocketAddress replicationAddress;

    private ServerProcess(Process process, InetSocketAddress address, InetSocketAddress replicationAddress) {
        this.process = process;
        this.address = address;
        this.replicationAddress = replicationAddress;
    }

    /** The C floor on a free port (it has no /ready: it is ready once it accepts a connection and answers). */
    static ServerProcess startFloor(Path binary) throws Exception {
        int port = freePort();
        Process p = new ProcessBuilder(binary.toAbsolutePath().toString(), Integer.toString(port))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        return awaitAnswer(p, new InetSocketAddress("127.0.0.1", port), null, "the C floor");
    }

    static ServerProcess start(Path jar, List<String> jvmOptions, List<String> serveArgs, Path dataDir) throws Exception {
        int port = freePort();
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        int replicationPort = freePort();
        command.addAll(List.of("-jar", jar.toAbsolutePath().toString(), "serve", "--data-dir", dataDir.toString(),
                "--http", "127.0.0.1:" + port, "--replication-listen", "127.0.0.1:" + replicationPort));
        command.addAll(serveArgs);
        ProcessBuilder pb = new ProcessBuilder(command);
        Path log = dataDir.resolveSibling(dataDir.getFileName() + "-server.log");
        pb.redirectErrorStream(true).redirectOutput(log.toFile());
        return awaitAnswer(pb.start(), new InetSocketAddress("127.0.0.1", port),
                new InetSocketAddress("127.0.0.1", replicationPort), "walden serve (see " + log + ")");
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** Waits until {@code p} answers {@code GET /ready} with 200 (up to a minute). */
    private static ServerProcess awaitAnswer(Process p, InetSocketAddress address, InetSocketAddress replication,
                                             String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new IllegalStateException(what + " exited with " + p.exitValue());
            }
            try (Socket s = new Socket()) {
                s.connect(address, 200);
                s.getOutputStream().write(HttpMessages.get("/ready"));
                HttpMessages.readAnswer(s.getInputStream(), new byte[4096]);
                return new ServerProcess(p, address, replication);
            } catch (IOException notYet) {
                Thread.sleep(50);
            }
        }
        p.destroyForcibly();
        throw new IllegalStateException(what + " did not become ready within 60 s");
    }

    /**
     * The sum of every sample of Prometheus series {@code name} (all its label sets) on the server's {@code /metrics};
     * NaN where it has none (the C floor).
     */
    double metric(String name) {
        if (replicationAddress == null) {
            return Double.NaN; // the C floor answers every request with /health's bytes and keeps the connection open
        }
        try {
            double sum = Double.NaN;
            for (String line : get("/metrics").split("\n")) {
                if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
                    double value = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                    sum = Double.isNaN(sum) ? value : sum + value;
                }
            }
            return sum;
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /** The whole answer (head and body) to {@code GET path}, on a connection of its own. */
    String get(String path) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(address, 1000);
            s.setSoTimeout(10_000);
            s.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: walden\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** The server's CPU time so far (user + system), from /proc; 0 where there is none. */
    long cpuNanos() {
        return cpuNanosOf(process.pid());
    }

    /** Process {@code pid}'s CPU time so far (user + system), from /proc; 0 where there is none. */
    static long cpuNanosOf(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime (fields 14 and 15)
            return ticks * (1_000_000_000L / 100); // USER_HZ is 100 on Linux
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
