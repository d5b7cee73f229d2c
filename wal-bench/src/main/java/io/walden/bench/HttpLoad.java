package io.walden.bench;

import io.walden.core.Durability;
import io.walden.core.SyncMethod;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The HTTP load generator: what a service in another language pays to commit through the sidecar. It starts
 * {@code walden.jar serve} as a child process on a fresh log, then drives it with closed-loop clients over
 * keep-alive connections (a Netty client, HdrHistogram latencies): 1, 4, 16, 64 and 256 connections, single and
 * batch appends at every durability level, {@code GET /health}, and a pipelined scenario that checks answers come
 * back in order with increasing LSNs. A lone connection is also measured against the embedded log's lone commit in
 * alternating slices on the same disk (the disk's latency drifts by 2-3x within minutes). Process CPU is reported
 * for the server and for this load generator, which share the machine's cores.
 *
 * <p>The machine's floor is measured beside it: {@code --floor BIN} names the compiled {@code src/main/c/http_floor.c},
 * a minimal epoll responder that answers {@code /health}'s bytes; the same client drives it at the same connection
 * counts, so the ratio says what the server adds to the kernel's own cost of a request on this machine.
 *
 * <p>With {@code --postgres wal-bench/postgres.sh}, PostgreSQL's pgbench runs in the same rounds as the sidecar and the
 * embedded log ({@link InterleavedBatching}), so that the ratios between them come from the same minutes.
 *
 * <p>Usage: {@code HttpLoad --jar wal-server/target/walden.jar [--floor BIN] [--postgres SCRIPT] [--server-opts 'JVM OPTIONS']
 * [--server-args 'SERVE FLAGS'] [--quick|--full] [--dir DIR] [--json FILE] [--only REGEX]}; {@code --only} runs the
 * scenarios whose name ("http local 16") contains a match; {@code --server-opts} adds JVM options to the server's
 * command line (a profiler agent, say), {@code --server-args} flags of {@code walden serve} ({@code --event-loops 4}).
 */
public final class HttpLoad {
    private static final int PAYLOAD = 64;
    private static final int BATCH = 16;
    /** Records per read request in the read scenarios. */
    static final int READ_PAGE = 1000;
    /** Also the rows of {@link HttpReport}'s tables. */
    static final int[] CONNECTIONS = {1, 4, 16, 64, 256};

    private final boolean full;
    private final Pattern only;
    private final LoadMeasurement measurement;
    private final ClosedLoop closedLoop;
    private final Path jar;
    private final Path floor;
    private final List<String> serverOpts;
    private final List<String> serverArgs;
    /** {@code wal-bench/postgres.sh}, to measure PostgreSQL in the same minutes (null: not measured). */
    private final Path postgres;

    private HttpLoad(boolean full, String only, Path jar, Path floor, List<String> serverOpts, List<String> serverArgs,
                     Path postgres) {
        this.postgres = postgres;
        this.serverArgs = serverArgs;
        this.floor = floor;
        this.full = full;
        this.only = Pattern.compile(only);
        this.measurement = new LoadMeasurement(full);
        this.closedLoop = new ClosedLoop(measurement);
        this.jar = jar;
        this.serverOpts = serverOpts;
    }

    public static void main(String[] args) throws Exception {
        List<String> rest = new ArrayList<>();
        Path jar = Path.of("wal-server/target/walden.jar");
        List<String> serverOpts = List.of();
        List<String> serverArgs = List.of();
        Path floor = null;
        Path postgres = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--jar")) {
                jar = Path.of(args[++i]);
            } else if (args[i].equals("--floor")) {
                floor = Path.of(args[++i]);
            } else if (args[i].equals("--postgres")) {
                postgres = Path.of(args[++i]);
            } else if (args[i].equals("--server-opts")) {
                serverOpts = List.of(args[++i].trim().split("\\s+"));
            } else if (args[i].equals("--server-args")) {
                serverArgs = List.of(args[++i].trim().split("\\s+"));
            } else {
                rest.add(args[i]);
            }
        }
        LoadArgs a = LoadArgs.parse("HttpLoad [--jar JAR] [--floor BIN] [--postgres SCRIPT] [--server-opts OPTS] [--server-args ARGS]",
                rest.toArray(new String[0]),
                Path.of("target/http-load.json"));
        Files.createDirectories(a.dir());
        System.setProperty("walden.bench.dir", a.dir().toString());
        HttpLoad load = new HttpLoad(a.full(), a.only(), jar, floor, serverOpts, serverArgs, postgres);
        load.runAll();
        load.measurement.writeJson(a.json(), a.dir());
    }

    private boolean wanted(String name) {
        return only.matcher(name).find();
    }

    private void runAll() throws Exception {
        Path d = BenchFiles.newDir("http");
        try (ServerProcess server = ServerProcess.start(jar, serverOpts, serverArgs, d.resolve("log"))) {
            warmUp(server);
            if (wanted("http local vs embedded, interleaved")) {
                measurement.results().add(InterleavedLoneHttp.run(server, PAYLOAD, full ? 50 : 25, 200));
            }
            if (wanted(InterleavedBatching.NAME)) {
                try (PostgresPeer pg = postgres == null ? null : PostgresPeer.start(postgres, Path.of(System.getProperty("walden.bench.dir")))) {
                    measurement.results().addAll(new InterleavedBatching(full).run(server, pg, interleavedConnections(),
                            full ? 5 : 3, full ? 5 : 3));
                }
            }
            Durability[] levels = full ? Durability.values() : new Durability[] {Durability.OFF, Durability.LOCAL, Durability.ON};
            for (int n : CONNECTIONS) {
                for (Durability level : levels) {
                    run(server, "http " + level.configName(), "append", n, 1,
                            HttpMessages.post("/v1/records?durability=" + level.configName(), new byte[PAYLOAD]), true);
                }
                run(server, "http local batch", "batch", n, 1,
                        HttpMessages.post("/v1/records/batch?durability=local", HttpMessages.batchBody(BATCH, PAYLOAD)), false);
                run(server, "http health", "health", n, 1, HttpMessages.get("/health"), false);
            }
            // Reads of a page of READ_PAGE records (the appends above filled the log): JSON with base64 payloads
            // against the same page as binary frames (docs/http-api.md, "Binary records").
            for (int n : new int[] {1, 4}) {
                String page = "/v1/records?from=0/0&limit=" + READ_PAGE;
                run(server, "http read json", "read", n, 1, HttpMessages.get(page), false);
                run(server, "http read binary", "read", n, 1, HttpMessages.get(page, "application/octet-stream"), false);
            }
            // Pipelining under load: every connection keeps 8 requests in flight; answers must come in order.
            run(server, "http local pipelined", "pipelined", 16, 8,
                    HttpMessages.post("/v1/records?durability=local", new byte[PAYLOAD]), true);
        } finally {
            BenchFiles.delete(d);
        }
        runReplicated();
        runFloor();
    }

    /**
     * The connection counts of the interleaved rounds: 4, 16, 64 and 256, or those listed in the system property
     * {@code walden.interleaved.connections} (e.g. {@code 16,64}, for a quicker A/B of two builds on issue #39's counts).
     */
    private static int[] interleavedConnections() {
        String listed = System.getProperty("walden.interleaved.connections");
        return listed == null ? new int[] {4, 16, 64, 256}
                : Arrays.stream(listed.split(",")).mapToInt(c -> Integer.parseInt(c.trim())).toArray();
    }

    /**
     * A primary whose {@code on} commits wait for one replica ({@code --sync-replicas 'FIRST 1 (r1)'}), a second
     * {@code walden.jar serve} process on the same machine over loopback: {@code local} and {@code on} side by side on
     * it, so that what the replica's confirmation adds is the only difference.
     */
    private void runReplicated() throws Exception {
        if (!wanted("http local replicated") && !wanted("http on replicated")) {
            return;
        }
        Path d = BenchFiles.newDir("http-replicated");
        List<String> primaryArgs = new ArrayList<>(serverArgs);
        primaryArgs.addAll(List.of("--sync-replicas", "FIRST 1 (r1)"));
        try (ServerProcess primary = ServerProcess.start(jar, serverOpts, primaryArgs, d.resolve("primary"));
             ServerProcess replica = ServerProcess.start(jar, serverOpts, List.of("--replicate-from",
                     primary.replicationAddress.getHostString() + ":" + primary.replicationAddress.getPort(),
                     "--name", "r1"), d.resolve("replica"))) {
            awaitReplica(primary);
            long seconds = full ? 5 : 3;
            closedLoop.warmUp(primary, 16, HttpMessages.post("/v1/records?durability=on", new byte[PAYLOAD]), seconds);
            for (int n : full ? CONNECTIONS : new int[] {1, 4, 16, 64}) {
                for (Durability level : new Durability[] {Durability.LOCAL, Durability.ON}) {
                    run(primary, "http " + level.configName() + " replicated", "append", n, 1,
                            HttpMessages.post("/v1/records?durability=" + level.configName(), new byte[PAYLOAD]), true);
                }
            }
        } finally {
            BenchFiles.delete(d);
        }
    }

    /** Waits until the primary lists a connected replica (its status names one), at most a minute. */
    private static void awaitReplica(ServerProcess primary) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (!primary.get("/admin/status").contains("\"replicas\":[{")) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the replica did not connect to the primary within a minute");
            }
            Thread.sleep(100);
        }
    }

    /** The minimal C responder, at the same connection counts as /health (skipped, and said so, without --floor). */
    private void runFloor() throws Exception {
        if (floor == null || !Files.isExecutable(floor)) {
            System.out.println("no --floor binary: the machine's HTTP floor is not measured (wal-bench/run.sh compiles it with gcc)");
            return;
        }
        try (ServerProcess c = ServerProcess.startFloor(floor)) {
            for (int n : CONNECTIONS) {
                run(c, "c epoll floor health", "health", n, 1, HttpMessages.get("/health"), false);
            }
        }
    }

    /**
     * Drives the new server through each kind of request for a few seconds before anything is measured: a sidecar
     * runs for days, and a JVM that has not compiled its hot paths yet spends more of the cores on its JIT compiler
     * than on requests.
     */
    private void warmUp(ServerProcess server) throws Exception {
        long seconds = full ? 5 : 3;
        System.out.println("warming the server up (" + 3 * seconds + " s)");
        closedLoop.warmUp(server, 16, HttpMessages.post("/v1/records?durability=local", new byte[PAYLOAD]), seconds);
        closedLoop.warmUp(server, 16, HttpMessages.post("/v1/records?durability=off", new byte[PAYLOAD]), seconds);
        closedLoop.warmUp(server, 16, HttpMessages.get("/health"), seconds);
    }

    /**
     * {@code connections} keep-alive connections, each keeping {@code pipeline} requests in flight, back to back,
     * measured and recorded as scenario {@code name}; fails unless every answer was 200 (and, with {@code lsnOrder},
     * in order).
     */
    private void run(ServerProcess server, String name, String kind, int connections, int pipeline, byte[] request,
                     boolean lsnOrder) throws Exception {
        if (!wanted(name + " " + connections)) {
            return;
        }
        ClosedLoop.Outcome o = closedLoop.measure(server, connections, pipeline, request, lsnOrder);
        if (o.failure() != null) {
            throw new IllegalStateException(name + " with " + connections + " connections: " + o.failure());
        }
        LoadMeasurement.Window w = o.window();
        Map<String, Object> r = measurement.record(name, kind, SyncMethod.FDATASYNC,
                kind.equals("health") ? 0 : PAYLOAD, connections, o.answers(), w.elapsedNanos(),
                kind.equals("health") || kind.equals("read") ? -1 : w.flushes(), w.histogram(),
                w.cpuNanos());
        r.put("connections", connections);
        r.put("pipeline", pipeline);
        r.put("recordsPerRequest", switch (kind) {
            case "batch" -> BATCH;
            case "read" -> READ_PAGE;
            case "health" -> 0;
            default -> 1;
        });
        r.put("serverCpuCores", LoadMeasurement.round2(o.serverCpuNanos() / (double) w.elapsedNanos()));
        r.put("clientCpuCores", r.get("cpuCores"));
        System.out.printf(Locale.ROOT, "    server cpu %.2f cores, load generator cpu %.2f cores%n",
                o.serverCpuNanos() / (double) w.elapsedNanos(), w.cpuNanos() / (double) w.elapsedNanos());
    }
}
