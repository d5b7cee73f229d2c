package io.walden.bench;

import io.walden.core.Durability;
import io.walden.core.SyncMethod;
import io.walden.core.Wal;
import io.walden.core.WalConfig;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A lone committer, Walden's LOCAL append against the raw {@code write()} + {@code fdatasync} loop, alternating in
 * short slices on the same file system: this machine's disk latency drifts by 2-3x within minutes, so two figures
 * measured a minute apart say little, while the median of the per-round ratios of adjacent slices says how much the
 * log adds over the floor.
 */
final class InterleavedLoneCommit {
    private static final long RAW_FILE_SIZE = 256L << 20;

    private InterleavedLoneCommit() {
    }

    /** Runs {@code rounds} pairs of {@code sliceMillis} slices (the first fifth are warm-up) and returns the result. */
    static Map<String, Object> run(SyncMethod method, int payload, int rounds, long sliceMillis) throws Exception {
        Path d = BenchFiles.newDir("interleaved");
        List<Double> ratios = new ArrayList<>();
        double rawSum = 0;
        double waldenSum = 0;
        int warmup = rounds / 5;
        try (FileChannel raw = RawForceLoop.preallocated(d.resolve("raw.dat"), RAW_FILE_SIZE);
             Wal wal = Wal.open(WalConfig.builder(d.resolve("log")).syncMethod(method).build())) {
            ByteBuffer record = ByteBuffer.allocateDirect(payload + 24);
            byte[] bytes = new byte[payload];
            long[] position = {0};
            long slice = sliceMillis * 1_000_000L;
            for (int round = 0; round < rounds; round++) {
                double rawRate = LoadMeasurement.sliceRate(slice,
                        () -> position[0] = RawForceLoop.writeAndForce(raw, record, position[0], RAW_FILE_SIZE));
                double waldenRate = LoadMeasurement.sliceRate(slice, () -> wal.append(bytes, Durability.LOCAL));
                if (round >= warmup) {
                    ratios.add(waldenRate / rawRate);
                    rawSum += rawRate;
                    waldenSum += waldenRate;
                }
            }
        } finally {
            BenchFiles.delete(d);
        }
        Collections.sort(ratios);
        int n = ratios.size();
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("name", "walden local " + method.configName() + " vs raw pwrite+fdatasync, interleaved");
        r.put("kind", "interleaved");
        r.put("syncMethod", method.name());
        r.put("payload", payload);
        r.put("committers", 1);
        r.put("rounds", n);
        r.put("rawCommitsPerSecond", Math.round(rawSum / n));
        r.put("waldenCommitsPerSecond", Math.round(waldenSum / n));
        r.put("medianRatio", LoadMeasurement.round2(ratios.get(n / 2)));
        r.put("p25Ratio", LoadMeasurement.round2(ratios.get(n / 4)));
        r.put("p75Ratio", LoadMeasurement.round2(ratios.get(3 * n / 4)));
        System.out.printf(Locale.ROOT, "%-60s %6d B: walden %,d/s, raw %,d/s, median ratio %.2f (p25 %.2f, p75 %.2f) over %d rounds%n",
                r.get("name"), payload, r.get("waldenCommitsPerSecond"), r.get("rawCommitsPerSecond"), r.get("medianRatio"),
                r.get("p25Ratio"), r.get("p75Ratio"), n);
        return r;
    }
}
