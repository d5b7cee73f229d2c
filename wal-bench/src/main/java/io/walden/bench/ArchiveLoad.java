package io.walden.bench;

import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.archive.ArchiveConfig;
import io.walden.core.archive.FileArchiveTarget;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * What continuous archiving costs appends: the durable {@code LOCAL} rate of 16 committers appending the JSON events
 * of {@link CompressionLoad}, with and without an archiver copying every sealed segment (and, after a second, the
 * current one's head) to a directory on the same disk, verified by reading it back. Small segments (4 MiB) seal every
 * few hundred milliseconds, so the archiver works through every slice. The two logs alternate in short slices, because
 * this machine's disk drifts 2-3x within minutes: the median of the per-round ratios is what counts.
 *
 * <p>Usage: {@code ArchiveLoad [--quick|--full] [--dir DIR] [--json FILE]}. Quick mode takes about half a minute.
 */
public final class ArchiveLoad {
    private static final long SEGMENT = 4L << 20;

    private ArchiveLoad() {
    }

    public static void main(String[] args) throws Exception {
        LoadArgs a = LoadArgs.parse("ArchiveLoad", args, Path.of("target/archive-load.json"));
        Files.createDirectories(a.dir());
        System.setProperty("walden.bench.dir", a.dir().toString());
        List<byte[]> events = CompressionLoad.events(new Random(42), 10_000);
        LoadMeasurement measurement = new LoadMeasurement(a.full());
        int rounds = a.full() ? 30 : 12;
        int warmup = 2;
        Path d = BenchFiles.newDir("archive");
        List<Double> ratios = new ArrayList<>();
        double plainSum = 0;
        double archivedSum = 0;
        long archivedSegments;
        try (FileArchiveTarget target = new FileArchiveTarget(d.resolve("archive"));
             Wal plain = Wal.open(WalConfig.builder(d.resolve("plain")).segmentSize(SEGMENT).build());
             Wal archived = Wal.open(WalConfig.builder(d.resolve("archived")).segmentSize(SEGMENT)
                     .archive(ArchiveConfig.builder(target).timeout(Duration.ofSeconds(1)).maxPendingBytes(1L << 40).build())
                     .build())) {
            for (int round = 0; round < rounds; round++) {
                double p = CompressionLoad.rate(plain, events, 1000);
                double r = CompressionLoad.rate(archived, events, 1000);
                if (round >= warmup) {
                    ratios.add(r / p);
                    plainSum += p;
                    archivedSum += r;
                }
            }
            archivedSegments = archived.status().archiver().orElseThrow().archivedSegments();
        } finally {
            BenchFiles.delete(d);
        }
        int n = rounds - warmup;
        Collections.sort(ratios);
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("name", "walden local x16 archived to a directory vs not archived");
        result.put("kind", "archive");
        result.put("committers", 16);
        result.put("segmentBytes", SEGMENT);
        result.put("plainCommitsPerSecond", Math.round(plainSum / n));
        result.put("archivedCommitsPerSecond", Math.round(archivedSum / n));
        result.put("archivedSegments", archivedSegments);
        result.put("rounds", n);
        result.put("medianRateRatio", LoadMeasurement.round2(ratios.get(n / 2)));
        result.put("p25RateRatio", LoadMeasurement.round2(ratios.get(n / 4)));
        result.put("p75RateRatio", LoadMeasurement.round2(ratios.get(3 * n / 4)));
        measurement.results().add(result);
        System.out.printf(Locale.ROOT, "%s: %,d vs %,d commits/s, median ratio %.2f (p25 %.2f, p75 %.2f) over %d rounds, "
                        + "%d segments archived%n", result.get("name"), result.get("archivedCommitsPerSecond"),
                result.get("plainCommitsPerSecond"), result.get("medianRateRatio"), result.get("p25RateRatio"),
                result.get("p75RateRatio"), n, archivedSegments);
        measurement.writeJson(a.json(), a.dir());
    }
}
