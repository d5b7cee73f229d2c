package io.walden.bench;

import io.walden.core.Durability;
import io.walden.core.SyncMethod;
import io.walden.core.Wal;
import io.walden.core.WalConfig;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A lone connection's {@code durability=local} appends to the server against the embedded log's lone LOCAL commit
 * (in this JVM, a log beside the server's on the same file system), alternating in short slices: the disk's latency
 * drifts by 2-3x within minutes, so the median of the per-round ratios of adjacent slices says what the sidecar adds.
 * The HTTP client is a blocking socket: the least a client in any language could do per request.
 */
final class InterleavedLoneHttp {
    private InterleavedLoneHttp() {
    }

    /** Runs {@code rounds} pairs of {@code sliceMillis} slices (the first fifth are warm-up) and returns the result. */
    static Map<String, Object> run(ServerProcess server, int payload, int rounds, long sliceMillis) throws Exception {
        Path d = BenchFiles.newDir("embedded");
        List<Double> ratios = new ArrayList<>();
        double httpSum = 0;
        double embeddedSum = 0;
        int warmup = rounds / 5;
        byte[] request = HttpMessages.post("/v1/records?durability=local", new byte[payload]);
        try (Wal wal = Wal.open(WalConfig.builder(d).build());
             Socket socket = new Socket()) {
            socket.setTcpNoDelay(true);
            socket.connect(server.address);
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[4096];
            byte[] bytes = new byte[payload];
            long slice = TimeUnit.MILLISECONDS.toNanos(sliceMillis);
            for (int round = 0; round < rounds; round++) {
                double httpRate = LoadMeasurement.sliceRate(slice, () -> {
                    out.write(request);
                    HttpMessages.readAnswer(in, buffer);
                });
                double embeddedRate = LoadMeasurement.sliceRate(slice, () -> wal.append(bytes, Durability.LOCAL));
                if (round >= warmup) {
                    ratios.add(httpRate / embeddedRate);
                    httpSum += httpRate;
                    embeddedSum += embeddedRate;
                }
            }
        } finally {
            BenchFiles.delete(d);
        }
        Collections.sort(ratios);
        int n = ratios.size();
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("name", "http local vs embedded, interleaved");
        r.put("kind", "interleaved");
        r.put("syncMethod", SyncMethod.FDATASYNC.name());
        r.put("payload", payload);
        r.put("committers", 1);
        r.put("rounds", n);
        r.put("httpRequestsPerSecond", Math.round(httpSum / n));
        r.put("embeddedCommitsPerSecond", Math.round(embeddedSum / n));
        r.put("medianRatio", LoadMeasurement.round2(ratios.get(n / 2)));
        r.put("p25Ratio", LoadMeasurement.round2(ratios.get(n / 4)));
        r.put("p75Ratio", LoadMeasurement.round2(ratios.get(3 * n / 4)));
        System.out.printf(Locale.ROOT, "%-60s: http %,d/s, embedded %,d/s, median ratio %.2f (p25 %.2f, p75 %.2f) over %d rounds%n",
                r.get("name"), r.get("httpRequestsPerSecond"), r.get("embeddedCommitsPerSecond"), r.get("medianRatio"),
                r.get("p25Ratio"), r.get("p75Ratio"), n);
        return r;
    }
}
