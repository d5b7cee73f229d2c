package io.walden.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.HdrHistogram.Histogram;
import org.apache.curator.test.TestingServer;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The cluster load generator (issue #38, docs/cluster.md): total commits/s of a cluster of 1, 2 and 3
 * {@code walden.jar serve --cluster} processes on this machine, and the time and copy rate of a fourth server's join.
 *
 * <p>ZooKeeper runs in this JVM (curator-test's TestingServer). For each N, on a fresh cluster path and fresh data
 * directories: N servers start as child processes, {@code --logs} logs are created with {@code replicas = min(2, N)},
 * and once Helix's placement has settled (every log led by its placed primary and in sync at its replica count, no
 * move in flight, the same for 3 s) each log's primary is looked up once; {@code --clients} closed-loop clients per log
 * then append 64 B at {@code on}, each over its own keep-alive connection straight to the log's primary, for a warm-up
 * and then {@code --seconds} measured. Reported per N: commits/s, latencies, each process's CPU (the servers' and
 * this one's, which also runs ZooKeeper, from /proc), and the disk's floor measured just before and just after the
 * load, with the servers idle (64 B + record header written and fdatasync'd back to back on one thread, as
 * CommitLoad's {@code raw pwrite+fdatasync}): the disk here drifts within minutes, and other work shares it. After the 3-server round's load, the logs are filled ({@code --fill-mib} each) and a
 * fourth server joins ({@link ClusterJoin}).
 *
 * <p>Usage: {@code ClusterLoad --jar wal-server/target/walden.jar [--seconds S] [--warmup W] [--logs L] [--clients C]
 * [--servers 1,2,3] [--fill-mib M] [--no-join] [--keep] [--quick] [--server-opts 'JVM OPTIONS'] [--dir DIR] [--json FILE]}.
 * {@code --quick}: 5 s measured after 2 s, 4 MiB per log, for trying it out.
 */
public final class ClusterLoad {
    private static final int PAYLOAD = 64;
    /** The raw loop's record: the payload and Walden's record header, as CommitLoad's floor. */
    private static final int RAW_RECORD = PAYLOAD + 24;
    private static final long RAW_FILE_SIZE = 64L << 20;

    private Path jar = Path.of("wal-server/target/walden.jar");
    private long seconds = 20;
    private long warmupSeconds = 5;
    private long floorSeconds = 5;
    private int logs = 12;
    private int clients = 4;
    private long fillBytes = 16L << 20;
    private boolean join = true;
    /** Keep each round's data directories and server logs (deleted when a round ends, unless it failed). */
    private boolean keep;
    private List<Integer> serverCounts = List.of(1, 2, 3);
    private List<String> serverOpts = List.of();
    private Path dir = Path.of("target/bench-data");
    private Path json = Path.of("target/cluster-load.json");

    private final ClusterControl control = new ClusterControl();

    public static void main(String[] args) throws Exception {
        ClusterLoad load = new ClusterLoad();
        load.parse(args);
        load.runAll();
    }

    private void parse(String[] args) {
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--jar" -> jar = Path.of(args[++i]);
                case "--seconds" -> seconds = Long.parseLong(args[++i]);
                case "--warmup" -> warmupSeconds = Long.parseLong(args[++i]);
                case "--logs" -> logs = Integer.parseInt(args[++i]);
                case "--clients" -> clients = Integer.parseInt(args[++i]);
                case "--fill-mib" -> fillBytes = Long.parseLong(args[++i]) << 20;
                case "--no-join" -> join = false;
                case "--keep" -> keep = true;
                case "--servers" -> serverCounts = java.util.Arrays.stream(args[++i].split(","))
                        .map(String::trim).map(Integer::valueOf).toList();
                case "--server-opts" -> serverOpts = List.of(args[++i].trim().split("\\s+"));
                case "--dir" -> dir = Path.of(args[++i]);
                case "--json" -> json = Path.of(args[++i]);
                case "--quick" -> {
                    seconds = 5;
                    warmupSeconds = 2;
                    floorSeconds = 2;
                    fillBytes = 4L << 20;
                }
                default -> throw new IllegalArgumentException("unknown argument " + args[i] + " (usage: ClusterLoad"
                        + " --jar JAR [--seconds S] [--warmup W] [--logs L] [--clients C] [--servers 1,2,3]"
                        + " [--fill-mib M] [--no-join] [--keep] [--quick] [--server-opts OPTS] [--dir DIR] [--json FILE])");
            }
        }
    }

    private void runAll() throws Exception {
        Files.createDirectories(dir);
        System.setProperty("walden.bench.dir", dir.toString());
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("machine", Machine.describe(dir));
        out.put("started", ZonedDateTime.now(ZoneOffset.UTC).toString());
        out.put("settings", Map.of("seconds", seconds, "warmupSeconds", warmupSeconds, "logs", logs,
                "clientsPerLog", clients, "payload", PAYLOAD, "durability", "on", "fillBytesPerLog", fillBytes));
        out.put("otherJavaProcessesAtStart", otherJavaProcesses());
        List<Map<String, Object>> rounds = new ArrayList<>();
        Path zkDir = BenchFiles.newDir("cluster-zk");
        try (TestingServer zk = new TestingServer(-1, zkDir.toFile(), true)) {
            for (int n : serverCounts) {
                rounds.add(round(zk, n, rounds));
            }
        } finally {
            BenchFiles.delete(zkDir);
        }
        out.put("rounds", rounds);
        out.put("ended", ZonedDateTime.now(ZoneOffset.UTC).toString());
        out.put("otherJavaProcessesAtEnd", otherJavaProcesses());
        Files.createDirectories(json.toAbsolutePath().getParent());
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(json.toFile(), out);
        System.out.println("wrote " + json);
        System.out.println();
        System.out.print(ClusterTable.markdown(rounds));
    }

    /** One cluster of {@code n} servers: start, create, settle, floor, load, floor, (join), stop. */
    private Map<String, Object> round(TestingServer zk, int n, List<Map<String, Object>> earlier) throws Exception {
        int replicas = Math.min(2, n);
        String cluster = "zk://" + zk.getConnectString() + "/walden-bench/n" + n;
        Path d = BenchFiles.newDir("cluster-" + n);
        List<String> names = new ArrayList<>();
        for (int i = 0; i < logs; i++) {
            names.add(String.format(Locale.ROOT, "log%02d", i));
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("servers", n);
        r.put("logs", logs);
        r.put("replicas", replicas);
        r.put("clientsPerLog", clients);
        List<ServerProcess> servers = new ArrayList<>();
        try (FileChannel raw = RawForceLoop.preallocated(d.resolve("raw.dat"), RAW_FILE_SIZE)) {
            long s0 = System.nanoTime();
            for (int i = 1; i <= n; i++) {
                servers.add(start(cluster, "s" + i, d));
            }
            r.put("startMs", (System.nanoTime() - s0) / 1_000_000);
            List<InetSocketAddress> addresses = servers.stream().map(s -> s.address).toList();
            long c0 = System.nanoTime();
            control.creationErrors.clear();
            control.createLogs(names, replicas, addresses);
            r.put("createMs", (System.nanoTime() - c0) / 1_000_000);
            r.put("creationErrors", List.copyOf(control.creationErrors));
            ClusterControl.View settled = control.awaitSettled(addresses.get(0), names,
                    c -> ClusterControl.logsSettled(c, names, replicas), 3000, 180_000);
            r.put("createToSettledMs", (settled.atNanos() - c0) / 1_000_000);
            Map<String, InetSocketAddress> primaries = ClusterControl.primaries(settled.cluster(), names);
            r.put("primariesPerServer", primariesPerServer(settled, n));
            System.out.printf(Locale.ROOT, "%d server(s): started in %.1f s, %d logs created and settled in %.1f s, "
                            + "primaries per server %s%n", n, (Long) r.get("startMs") / 1e3, logs,
                    (Long) r.get("createToSettledMs") / 1e3, r.get("primariesPerServer"));
            long[] idle = new long[n];
            for (int i = 0; i < n; i++) {
                idle[i] = -servers.get(i).cpuNanos();
            }
            long i0 = System.nanoTime();
            double before = floor(raw); // the servers idle meanwhile: what they spend with no load
            List<Double> idleCores = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                idleCores.add(LoadMeasurement.round2((idle[i] + servers.get(i).cpuNanos()) / (double) (System.nanoTime() - i0)));
            }
            r.put("idleServerCpuCores", idleCores);
            ClusterLoop.Outcome o = ClusterLoop.run(primaries, clients, PAYLOAD, servers,
                    TimeUnit.SECONDS.toMillis(warmupSeconds), TimeUnit.SECONDS.toMillis(seconds));
            double after = floor(raw);
            record(r, o, earlier);
            double floor = (before + after) / 2;
            r.put("floorBeforePerSecond", Math.round(before));
            r.put("floorAfterPerSecond", Math.round(after));
            r.put("floorCommitsPerSecond", Math.round(floor));
            r.put("ratioToFloor", LoadMeasurement.round2(((Number) r.get("commitsPerSecond")).doubleValue() / floor));
            System.out.printf(Locale.ROOT, "    floor (64 B write+fdatasync, one thread): %,.0f/s before, %,.0f/s after;"
                    + " %d server(s) make %.2fx their mean; idle, the servers spent %s cores%n", before, after, n,
                    r.get("ratioToFloor"), idleCores);
            if (join && n == 3) {
                r.put("join", ClusterJoin.run(control, servers, () -> start(cluster, "s4", d), "s4", names, replicas,
                        fillBytes));
            }
        } finally {
            for (ServerProcess s : servers) {
                s.close();
            }
        }
        if (!keep) {
            BenchFiles.delete(d);
        }
        return r;
    }

    private ServerProcess start(String cluster, String name, Path d) throws Exception {
        return ServerProcess.start(jar, serverOpts, List.of("--cluster", cluster, "--name", name), d.resolve(name));
    }

    private static Map<String, Integer> primariesPerServer(ClusterControl.View v, int n) {
        Map<String, Integer> out = new LinkedHashMap<>();
        for (int i = 1; i <= n; i++) {
            out.put("s" + i, 0);
        }
        v.cluster().path("logs").forEach(l -> out.merge(l.path("primary").asText(), 1, Integer::sum));
        return out;
    }

    /** The loop's figures into {@code r}; the ratio to the first round's commits/s (1 server, unless told otherwise). */
    private static void record(Map<String, Object> r, ClusterLoop.Outcome o, List<Map<String, Object>> earlier) {
        double elapsed = o.elapsedNanos();
        long rate = Math.round(o.commits() / (elapsed / 1e9));
        Histogram h = o.histogram();
        r.put("commits", o.commits());
        r.put("commitsPerSecond", rate);
        r.put("ratioToFirst", earlier.isEmpty() ? 1.0
                : LoadMeasurement.round2(rate / ((Number) earlier.get(0).get("commitsPerSecond")).doubleValue()));
        r.put("p50us", h.getValueAtPercentile(50));
        r.put("p99us", h.getValueAtPercentile(99));
        r.put("p999us", h.getValueAtPercentile(99.9));
        r.put("meanUs", LoadMeasurement.round2(h.getMean()));
        List<Double> serverCores = new ArrayList<>();
        long serverCpu = 0;
        for (long c : o.serverCpuNanos()) {
            serverCores.add(LoadMeasurement.round2(c / elapsed));
            serverCpu += c;
        }
        r.put("serverCpuCores", serverCores);
        r.put("loadGeneratorCpuCores", LoadMeasurement.round2(o.clientCpuNanos() / elapsed));
        // The machine's busy cores beyond the cluster's processes and this one: other builds and tests on the machine.
        r.put("otherProcessesCpuCores", LoadMeasurement.round2(Math.max(0, o.machineBusyNanos() - serverCpu
                - o.clientCpuNanos()) / elapsed));
        r.put("flushesAllServers", o.flushes());
        r.put("commitsPerFlush", o.flushes() > 0 ? LoadMeasurement.round2((double) o.commits() / o.flushes()) : null);
        r.put("serverCpuUsPerCommit", LoadMeasurement.round2(serverCpu / 1e3 / Math.max(1, o.commits())));
        r.put("failure", o.failure());
        System.out.printf(Locale.ROOT, "%d server(s), %d logs x %d clients: %,d commits/s (%.2fx the first round)  "
                        + "p50 %d us  p99 %d us  p99.9 %d us  server cpu %s cores, load generator %.2f cores, other "
                        + "processes %.2f cores, %s commits per force (every server's)%s%n",
                r.get("servers"), r.get("logs"), r.get("clientsPerLog"), rate, r.get("ratioToFirst"),
                h.getValueAtPercentile(50), h.getValueAtPercentile(99), h.getValueAtPercentile(99.9), serverCores,
                o.clientCpuNanos() / elapsed, r.get("otherProcessesCpuCores"), r.get("commitsPerFlush"),
                o.failure() == null ? "" : "  FAILURE: " + o.failure());
    }

    /** The disk's floor: one thread writing a 64 B record (and header) and fdatasync'ing it, back to back. */
    private double floor(FileChannel ch) throws Exception {
        ByteBuffer record = ByteBuffer.allocateDirect(RAW_RECORD);
        long[] pos = {0};
        return LoadMeasurement.sliceRate(TimeUnit.SECONDS.toNanos(floorSeconds),
                () -> pos[0] = RawForceLoop.writeAndForce(ch, record, pos[0], RAW_FILE_SIZE));
    }

    /** What else runs Java on the machine (other builds and tests share the cores): command lines, shortened. */
    private static List<String> otherJavaProcesses() {
        long self = ProcessHandle.current().pid();
        return ProcessHandle.allProcesses().filter(p -> p.pid() != self)
                .filter(p -> p.info().command().map(c -> c.endsWith("java")).orElse(false))
                .map(p -> p.pid() + " " + p.info().commandLine().map(c -> c.length() > 160
                        ? c.substring(c.length() - 160) : c).orElse("?"))
                .toList();
    }
}
