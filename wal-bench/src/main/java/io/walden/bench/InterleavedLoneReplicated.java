package io.walden.bench;

import io.walden.core.Durability;
import io.walden.core.SyncMethod;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.primary.ReplicaStatus;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.replica.ReplicaClient;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A lone committer on a primary with one synchronous replica over loopback: {@code LOCAL}, {@code ON} shipping
 * written bytes (the default) and {@code ON} with {@code shipFlushedOnly}, alternating in short slices. This machine's
 * disk latency drifts 2-3x within minutes, so the median of the per-round ratios of adjacent slices says what a
 * lone synchronous commit costs over a local one better than two figures measured a minute apart. A third pair with
 * no forces ({@code SyncMethod.NONE}) measures what the round trip's threads and sockets cost by themselves.
 */
final class InterleavedLoneReplicated {
    private static final long SEGMENT = 64L << 20;

    private InterleavedLoneReplicated() {
    }

    /** A primary and its replica, both logs in {@code dir}. */
    private record Pair(Wal primary, Wal replica, ReplicationServer server, ReplicaClient client) implements AutoCloseable {
        static Pair open(Path dir, boolean flushedOnly, SyncMethod method) throws Exception {
            Wal primary = Wal.open(WalConfig.builder(dir.resolve("primary")).segmentSize(SEGMENT).syncMethod(method)
                    .newEpochAfterCrash(true).build());
            Wal replica = Wal.open(WalConfig.builder(dir.resolve("replica")).segmentSize(SEGMENT).syncMethod(method)
                    .logId(primary.status().logId()).build());
            ReplicationServer server = ReplicationServer.builder(primary).shipFlushedOnly(flushedOnly)
                    .listen(new InetSocketAddress("127.0.0.1", 0)).start();
            ReplicaClient client = ReplicaClient.builder(replica, server.address(), "r1").start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!server.replica("r1").map(ReplicaStatus::isStreaming).orElse(false)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the replica did not start streaming within 30 s");
                }
                Thread.sleep(5);
            }
            server.policy(SyncPolicy.parse("FIRST 1 (r1)"));
            return new Pair(primary, replica, server, client);
        }

        @Override
        public void close() {
            client.close();
            server.close();
            replica.close();
            primary.close();
        }
    }

    /** Runs {@code rounds} rounds of three {@code sliceMillis} slices (the first fifth are warm-up). */
    static Map<String, Object> run(int payload, int rounds, long sliceMillis) throws Exception {
        Path d = BenchFiles.newDir("interleaved-replicated");
        List<Double> written = new ArrayList<>();
        List<Double> flushed = new ArrayList<>();
        double localSum = 0;
        double writtenSum = 0;
        double flushedSum = 0;
        double chainSum = 0;
        int warmup = rounds / 5;
        byte[] bytes = new byte[payload];
        try (Pair shipsWritten = Pair.open(d.resolve("written"), false, SyncMethod.FDATASYNC);
             Pair shipsFlushed = Pair.open(d.resolve("flushed"), true, SyncMethod.FDATASYNC);
             Pair noForces = Pair.open(d.resolve("none"), false, SyncMethod.NONE)) {
            for (int round = 0; round < rounds; round++) {
                double local = rate(shipsWritten.primary(), Durability.LOCAL, bytes, sliceMillis);
                double onWritten = rate(shipsWritten.primary(), Durability.ON, bytes, sliceMillis);
                double onFlushed = rate(shipsFlushed.primary(), Durability.ON, bytes, sliceMillis);
                // What an ON commit costs beyond LOCAL with no force on either side: the threads and sockets alone.
                double chainMicros = 1e6 / rate(noForces.primary(), Durability.ON, bytes, sliceMillis / 4)
                        - 1e6 / rate(noForces.primary(), Durability.LOCAL, bytes, sliceMillis / 4);
                if (round >= warmup) {
                    // Latency ratios: with one committer, a commit's mean latency is 1 / rate.
                    written.add(local / onWritten);
                    flushed.add(local / onFlushed);
                    localSum += local;
                    writtenSum += onWritten;
                    flushedSum += onFlushed;
                    chainSum += chainMicros;
                }
            }
        } finally {
            BenchFiles.delete(d);
        }
        int n = written.size();
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("name", "walden lone on vs local, loopback, interleaved");
        r.put("kind", "interleaved");
        r.put("payload", payload);
        r.put("committers", 1);
        r.put("rounds", n);
        r.put("localCommitsPerSecond", Math.round(localSum / n));
        r.put("onCommitsPerSecond", Math.round(writtenSum / n));
        r.put("onFlushedOnlyCommitsPerSecond", Math.round(flushedSum / n));
        r.put("handOffMicros", Math.round(chainSum / n));
        Collections.sort(written);
        Collections.sort(flushed);
        r.put("medianLatencyRatio", LoadMeasurement.round2(written.get(n / 2)));
        r.put("p25LatencyRatio", LoadMeasurement.round2(written.get(n / 4)));
        r.put("p75LatencyRatio", LoadMeasurement.round2(written.get(3 * n / 4)));
        r.put("flushedOnlyMedianLatencyRatio", LoadMeasurement.round2(flushed.get(n / 2)));
        System.out.printf(Locale.ROOT, "%-50s %d B: local %,d/s, on %,d/s, on flushed-only %,d/s; on/local latency median %.2f "
                        + "(p25 %.2f, p75 %.2f), flushed-only %.2f, over %d rounds; hand-offs without forces %d us%n", r.get("name"), payload,
                r.get("localCommitsPerSecond"), r.get("onCommitsPerSecond"), r.get("onFlushedOnlyCommitsPerSecond"),
                r.get("medianLatencyRatio"), r.get("p25LatencyRatio"), r.get("p75LatencyRatio"),
                r.get("flushedOnlyMedianLatencyRatio"), n, r.get("handOffMicros"));
        return r;
    }

    private static double rate(Wal wal, Durability level, byte[] bytes, long sliceMillis) throws Exception {
        return LoadMeasurement.sliceRate(TimeUnit.MILLISECONDS.toNanos(sliceMillis), () -> wal.append(bytes, level));
    }
}
