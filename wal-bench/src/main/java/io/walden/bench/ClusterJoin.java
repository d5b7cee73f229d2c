package io.walden.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@link ClusterLoad}'s join: the cluster's logs are filled with data first (batches at {@code on}, at each log's
 * primary, so its replica holds them too), then one more server starts, and the time is taken from its start until
 * Helix has settled: every log led by its placed primary, in sync at its replica count, no move in flight, the new
 * server holding copies, and that placement unchanged for 5 s. The bytes copied are what the new server's logs hold
 * then (its /admin/status, every log but its own {@code default}): nothing is appended while it joins, so every one
 * of them came over from another server.
 */
final class ClusterJoin {
    /** How long the final placement must stay the same to count as settled (WAGED may hand a log over once more). */
    private static final long STABLE_MILLIS = 5000;
    private static final int RECORD_BYTES = 1024;
    private static final int BATCH_RECORDS = 1024;

    private ClusterJoin() {
    }

    /**
     * Fills each log with {@code fillBytes}, then starts the server {@code startJoiner} makes (named {@code joinerName};
     * added to {@code servers}, which the caller closes) and measures its join; returns what it saw, for the JSON.
     */
    static Map<String, Object> run(ClusterControl control, List<ServerProcess> servers, Callable<ServerProcess> startJoiner,
                                   String joinerName, List<String> logs, int replicas, long fillBytes) throws Exception {
        InetSocketAddress first = servers.get(0).address;
        Map<String, Object> r = new LinkedHashMap<>();
        Map<String, InetSocketAddress> primaries = ClusterControl.primaries(control.getJson(first, "/admin/cluster"), logs);
        long f0 = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> fills = new ArrayList<>();
            for (String log : logs) {
                fills.add(pool.submit(() -> {
                    control.fill(primaries.get(log), log, fillBytes, RECORD_BYTES, BATCH_RECORDS);
                    return null;
                }));
            }
            for (Future<?> f : fills) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        double fillSeconds = (System.nanoTime() - f0) / 1e9;
        r.put("fillBytesPerLog", fillBytes);
        r.put("fillSeconds", LoadMeasurement.round2(fillSeconds));
        r.put("fillMBps", LoadMeasurement.round2(fillBytes * logs.size() / fillSeconds / 1e6));
        System.out.printf(Locale.ROOT, "filled %d logs with %d MiB each in %.1f s (%.1f MB/s at the primaries, on)%n",
                logs.size(), fillBytes >> 20, fillSeconds, fillBytes * logs.size() / fillSeconds / 1e6);
        control.awaitSettled(first, logs, c -> ClusterControl.logsSettled(c, logs, replicas), 2000, 120_000);

        List<ServerProcess> before = List.copyOf(servers);
        long t0 = System.nanoTime();
        long[] cpu0 = cpu(before, null);
        ServerProcess joiner = startJoiner.call();
        servers.add(joiner);
        long ready = System.nanoTime();
        long[] firstCopy = {0};
        ClusterControl.View settled = control.awaitSettled(first, logs, c -> {
            int copies = copiesOf(c, joinerName);
            if (copies > 0 && firstCopy[0] == 0) {
                firstCopy[0] = System.nanoTime();
            }
            return copies > 0 && ClusterControl.logsSettled(c, logs, replicas);
        }, STABLE_MILLIS, 600_000, () -> cpu(before, joiner));
        long end = settled.atNanos();
        long bytes = control.namedLogBytes(joiner.address);
        JsonNode server = serverOf(settled.cluster(), joinerName);
        double seconds = (end - t0) / 1e9;
        r.put("startToReadyMs", (ready - t0) / 1_000_000);
        r.put("startToFirstCopyMs", (firstCopy[0] - t0) / 1_000_000);
        r.put("startToSettledMs", (end - t0) / 1_000_000);
        r.put("joinerPrimaries", server.path("primaries").asInt());
        r.put("joinerReplicas", server.path("replicas").asInt());
        r.put("evenShareCopies", LoadMeasurement.round2(logs.size() * (double) replicas / servers.size()));
        r.put("bytesCopied", bytes);
        r.put("copyRateMBps", LoadMeasurement.round2(bytes / seconds / 1e6));
        r.put("copyRateFromReadyMBps", LoadMeasurement.round2(bytes / ((end - ready) / 1e9) / 1e6));
        List<Double> cores = new ArrayList<>();
        long[] cpu1 = settled.sample();
        for (int i = 0; i < cpu1.length; i++) {
            cores.add(LoadMeasurement.round2((cpu1[i] - cpu0[i]) / (double) (end - t0)));
        }
        r.put("cpuCoresDuringJoin", cores); // servers in order, the joiner last, then this process
        r.put("placementAfter", ClusterControl.placement(settled.cluster(), logs));
        System.out.printf(Locale.ROOT, "server %s joined: ready after %.1f s, first copy after %.1f s, settled after "
                        + "%.1f s holding %d primaries and %d replicas; %.1f MiB copied, %.1f MB/s from its start%n",
                joinerName, (ready - t0) / 1e9, (firstCopy[0] - t0) / 1e9, seconds, server.path("primaries").asInt(),
                server.path("replicas").asInt(), bytes / 1048576.0, bytes / seconds / 1e6);
        return r;
    }

    /** The copies (primaries and replicas) {@code name} holds in a view; 0 while it is not listed. */
    private static int copiesOf(JsonNode cluster, String name) {
        JsonNode s = serverOf(cluster, name);
        return s.path("primaries").asInt() + s.path("replicas").asInt();
    }

    private static JsonNode serverOf(JsonNode cluster, String name) {
        for (JsonNode s : cluster.path("servers")) {
            if (s.path("name").asText().equals(name)) {
                return s;
            }
        }
        return MissingNode.getInstance();
    }

    /**
     * CPU so far of each of {@code servers}, then of the joiner (0 before it started: its figure is all it spent
     * joining), then of this process.
     */
    private static long[] cpu(List<ServerProcess> servers, ServerProcess joiner) {
        long[] out = new long[servers.size() + 2];
        for (int i = 0; i < servers.size(); i++) {
            out[i] = servers.get(i).cpuNanos();
        }
        out[servers.size()] = joiner == null ? 0 : joiner.cpuNanos();
        out[servers.size() + 1] = ServerProcess.cpuNanosOf(ProcessHandle.current().pid());
        return out;
    }
}
