package io.walden.bench;

import io.walden.core.Durability;
import io.walden.core.SyncMethod;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.replication.TcpProxy;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.primary.ReplicaStatus;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.replica.ReplicaClient;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The replication load generator: commit throughput and latency per durability level ({@code LOCAL},
 * {@code REMOTE_WRITE}, {@code ON}, {@code REMOTE_APPLY}) with 1 to 256 committer threads, a primary and one
 * synchronous replica ({@code FIRST 1 (r1)}) in this JVM, connected over loopback TCP directly or through a
 * {@link TcpProxy} adding 10 ms or 100 ms of round trip. {@code LOCAL} with the replica connected and streaming is
 * the baseline each remote level is compared with, in the same run. The primary ships bytes once written (the
 * default, docs/replication.md "Shipping before the flush"); {@code ON} is also measured with
 * {@code shipFlushedOnly} (PostgreSQL's rule), side by side at each committer count, scenario names ending in
 * "flushed-only".
 *
 * <p>Usage: {@code ReplicationLoad [--quick|--full] [--dir DIR] [--json FILE] [--only REGEX]}; {@code --only} runs
 * the scenarios whose name ("walden on loopback 64") matches. Quick mode takes about 2 minutes.
 */
public final class ReplicationLoad {
    private static final long SEGMENT = 16L << 20;
    private static final int PAYLOAD = 64;
    private static final int[] COMMITTERS = {1, 4, 16, 64, 256};

    private final boolean full;
    private final Pattern only;
    private final LoadMeasurement measurement;

    private ReplicationLoad(boolean full, String only) {
        this.full = full;
        this.only = Pattern.compile(only);
        this.measurement = new LoadMeasurement(full);
    }

    public static void main(String[] args) throws Exception {
        LoadArgs a = LoadArgs.parse("ReplicationLoad", args, Path.of("target/replication-load.json"));
        Path dir = a.dir();
        Files.createDirectories(dir);
        System.setProperty("walden.bench.dir", dir.toString());
        ReplicationLoad run = new ReplicationLoad(a.full(), a.only());
        run.runAll();
        run.measurement.writeJson(a.json(), dir);
    }

    private void runAll() throws Exception {
        if (only.matcher("walden lone on vs local interleaved").matches()) {
            measurement.results().add(InterleavedLoneReplicated.run(PAYLOAD, full ? 50 : 25, 200));
        }
        Durability[] levels = {Durability.LOCAL, Durability.REMOTE_WRITE, Durability.ON, Durability.REMOTE_APPLY};
        // Levels side by side per committer count: the ratios compare runs minutes, not seconds, apart otherwise.
        for (int n : COMMITTERS) {
            for (Durability level : levels) {
                scenario(level, n, 0, false);
            }
            scenario(Durability.ON, n, 0, true);
        }
        Durability[] farLevels = full ? new Durability[] {Durability.REMOTE_WRITE, Durability.ON, Durability.REMOTE_APPLY}
                : new Durability[] {Durability.ON};
        for (int rttMillis : new int[] {10, 100}) {
            for (Durability level : farLevels) {
                for (int n : COMMITTERS) {
                    scenario(level, n, rttMillis, false);
                }
            }
        }
    }

    /**
     * One primary, one synchronous replica, {@code threads} committers at {@code level}, a link of {@code rttMillis};
     * the primary ships only flushed bytes when {@code flushedOnly}.
     */
    private void scenario(Durability level, int threads, int rttMillis, boolean flushedOnly) throws Exception {
        String linkName = rttMillis == 0 ? "loopback" : rttMillis + " ms rtt";
        String name = "walden " + level.configName() + " " + linkName + (flushedOnly ? " flushed-only" : "");
        if (!only.matcher(name + " " + threads).matches()) {
            return;
        }
        Path d = BenchFiles.newDir("replication");
        WalConfig.Builder primaryConfig = WalConfig.builder(d.resolve("primary")).segmentSize(SEGMENT).newEpochAfterCrash(true);
        try (Wal primary = Wal.open(primaryConfig.build());
             Wal replica = Wal.open(WalConfig.builder(d.resolve("replica")).segmentSize(SEGMENT).logId(primary.status().logId()).build());
             ReplicationServer server = ReplicationServer.builder(primary).shipFlushedOnly(flushedOnly)
                     .listen(new InetSocketAddress("127.0.0.1", 0)).start();
             TcpProxy link = TcpProxy.start(server.address(), TimeUnit.MILLISECONDS.toMicros(rttMillis) / 2);
             ReplicaClient client = ReplicaClient.builder(replica, rttMillis == 0 ? server.address() : link.address(), "r1").start()) {
            awaitStreaming(server);
            server.policy(SyncPolicy.parse("FIRST 1 (r1)"));
            byte[] bytes = new byte[PAYLOAD];
            Map<String, Object> r = measurement.measure(name, "replicated",
                    SyncMethod.FDATASYNC, PAYLOAD, threads, () -> primary.append(bytes, level), primary.status()::flushCount);
            r.put("level", level.configName());
            r.put("rttMs", rttMillis);
            r.put("shipping", flushedOnly ? "flushed" : "written");
            server.policy(null);
        } finally {
            BenchFiles.delete(d);
        }
    }

    private static void awaitStreaming(ReplicationServer server) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            if (server.replica("r1").map(ReplicaStatus::isStreaming).orElse(false)) {
                return;
            }
            Thread.sleep(5);
        }
        throw new IllegalStateException("the replica did not start streaming within 30 s");
    }
}
