package io.walden.bench;

import io.walden.core.Durability;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.WalStore;
import io.walden.core.WalStoreConfig;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.replica.PrimaryIdentity;
import io.walden.replication.replica.ReplicaLogs;
import io.walden.replication.replica.StoreReplicaClient;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Replication of many logs over one connection (protocol version 6), a primary and one synchronous replica
 * ({@code FIRST 1 (r1)}) in this JVM over loopback TCP: {@code LOGS} logs with {@code PER_LOG} committers each, appending
 * 64 B at {@code LEVEL} for {@code SECONDS} after a warm-up of a third of that; prints the commits per second and the
 * replication threads each side holds. With {@code LOGS} 1 the one log is the root log {@code default}; otherwise
 * {@code LOGS} named logs of the store (and {@code default}, idle). For comparing builds (main's against a branch's),
 * run alternately.
 *
 * <p>Usage: {@code StoreReplicationLoad LOGS PER_LOG SECONDS LEVEL [DIR]}, e.g. {@code 64 1 10 on}.
 */
public final class StoreReplicationLoad {
    private static final int PAYLOAD = 64;
    /** Small segments: 65 logs a side, each preparing its next segment, stay within a few hundred MiB. */
    private static final long SEGMENT = 4L << 20;
    private static final long RING = 1L << 20;
    private static final int MAX_RECORD = 64 << 10;

    private StoreReplicationLoad() {
    }

    public static void main(String[] args) throws Exception {
        int logs = Integer.parseInt(args[0]);
        int perLog = Integer.parseInt(args[1]);
        int seconds = Integer.parseInt(args[2]);
        Durability level = Durability.parse(args[3]);
        Path dir = BenchFiles.newDir(args.length > 4 ? args[4] : "store-replication");
        try {
            run(dir, logs, perLog, seconds, level);
        } finally {
            BenchFiles.delete(dir);
        }
    }

    private static void run(Path dir, int logs, int perLog, int seconds, Durability level) throws Exception {
        Path p = dir.resolve("p");
        Path r = dir.resolve("r");
        try (Wal root = Wal.open(WalConfig.builder(p).segmentSize(SEGMENT).newEpochAfterCrash(true).build()); WalStore store = store(p)) {
            List<Wal> targets = new ArrayList<>();
            if (logs == 1) {
                targets.add(root);
            } else {
                for (int i = 0; i < logs; i++) {
                    targets.add(store.create("log-" + i));
                }
            }
            try (ReplicationServer server = ReplicationServer.builder(root).store(store, name -> Map.of())
                    .listen(new InetSocketAddress("127.0.0.1", 0)).start();
                 Wal replicaRoot = PrimaryIdentity.fetch(server.address(), "r1", null, null, 10_000)
                         .openReplicaLog(WalConfig.builder(r).segmentSize(SEGMENT));
                 WalStore replicaStore = store(r);
                 StoreReplicaClient client = StoreReplicaClient.builder(ReplicaLogs.of(replicaRoot, replicaStore, null),
                         server.address(), "r1").start()) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (!allStreaming(server, client, logs) && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                server.policy(SyncPolicy.parse("FIRST 1 (r1)"));
                double rate = measure(targets, perLog, seconds, level);
                System.out.printf(Locale.ROOT, "logs=%d per-log=%d level=%s commits/s=%.0f sender-threads=%d receiver-threads=%d%n",
                        logs, perLog, level.configName(), rate, threads("walden-sender"), threads("walden-receiver"));
                server.policy(null);
            }
        }
    }

    private static boolean allStreaming(ReplicationServer server, StoreReplicaClient client, int logs) {
        for (String log : server.logs()) {
            if (!client.isStreaming(log)) {
                return false;
            }
        }
        return server.logs().size() == (logs == 1 ? 1 : logs + 1);
    }

    /** Commits per second over {@code seconds}, after a warm-up of a third of that. */
    private static double measure(List<Wal> targets, int perLog, int seconds, Durability level) throws InterruptedException {
        LongAdder commits = new LongAdder();
        long warmUpNanos = TimeUnit.SECONDS.toNanos(seconds) / 3;
        long start = System.nanoTime();
        long measureFrom = start + warmUpNanos;
        long end = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
        List<Thread> committers = new ArrayList<>();
        byte[] bytes = new byte[PAYLOAD];
        for (Wal wal : targets) {
            for (int i = 0; i < perLog; i++) {
                Thread t = new Thread(() -> {
                    for (long now = System.nanoTime(); now < end; now = System.nanoTime()) {
                        wal.append(bytes, level);
                        if (now >= measureFrom) {
                            commits.increment();
                        }
                    }
                });
                t.start();
                committers.add(t);
            }
        }
        for (Thread t : committers) {
            t.join();
        }
        return commits.sum() / (double) seconds;
    }

    /**
     * A store whose logs all stay awake: each log's WAL buffers are {@value #RING} bytes and its records at most
     * {@value #MAX_RECORD} bytes (so the ring's slack for the largest record is small), and the store's budget of WAL
     * buffers (1 GiB) holds 512 such rings. With the defaults (rings of the segment size, plus room for a record as
     * large) the logs beyond a few hundred took turns for the budget ({@code WalBuffersBudget}), and this measured that
     * instead of replication: 512 logs made 89-433 commits/s, and 2,418-4,496 once all fit.
     */
    private static WalStore store(Path dir) {
        return WalStore.open(WalStoreConfig.builder(dir)
                .defaults(b -> b.segmentSize(SEGMENT).walBuffers(RING).maxPayloadSize(MAX_RECORD)).build());
    }

    private static long threads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).count();
    }
}
