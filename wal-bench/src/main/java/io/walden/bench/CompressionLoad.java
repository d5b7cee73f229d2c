package io.walden.bench;

import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdDictTrainer;
import io.walden.core.Compression;
import io.walden.core.Durability;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.internal.record.RecordDescriptor;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * Record compression on realistic payloads: JSON events of 200 B to 4 KiB generated with a fixed seed (an order
 * service's events: ids, timestamps, customers, line items). For {@code NONE}, {@code LZ4} and {@code ZSTD} (at the
 * log's default level, and at zstd's own level 3 beside it), in one
 * run: the bytes the log stores for the same events, and the durable {@code LOCAL} append rate with 16 committers.
 * The rates alternate in short slices, one log per codec, because this machine's disk drifts 2-3x within minutes:
 * the median of the per-round ratios to {@code NONE} is what counts.
 *
 * <p>Usage: {@code CompressionLoad [--quick|--full] [--dir DIR] [--json FILE]}. Quick mode takes about a minute.
 */
public final class CompressionLoad {
    private static final int EVENTS = 10_000;
    private static final int COMMITTERS = 16;

    /** A log's compression: its codec, and for zstd its level. */
    private record Variant(String label, Compression codec, int zstdLevel) {
        WalConfig.Builder config(Path dir) {
            return WalConfig.builder(dir).compression(codec).zstdLevel(zstdLevel);
        }
    }

    private static final Variant NONE = new Variant("none", Compression.NONE, WalConfig.DEFAULT_ZSTD_LEVEL);
    /** The log's default zstd level: the codec's figure. */
    private static final Variant ZSTD = new Variant("zstd", Compression.ZSTD, WalConfig.DEFAULT_ZSTD_LEVEL);
    /** zstd's own default level beside it, in the same slices: what the log's faster default buys on the append path. */
    private static final Variant ZSTD_3 = new Variant("zstd level 3", Compression.ZSTD, 3);
    private static final List<Variant> VARIANTS = List.of(NONE, new Variant("lz4", Compression.LZ4,
            WalConfig.DEFAULT_ZSTD_LEVEL), ZSTD, ZSTD_3);

    private CompressionLoad() {
    }

    public static void main(String[] args) throws Exception {
        LoadArgs a = LoadArgs.parse("CompressionLoad", args, Path.of("target/compression-load.json"));
        Files.createDirectories(a.dir());
        System.setProperty("walden.bench.dir", a.dir().toString());
        List<byte[]> events = events(new Random(42), EVENTS);
        LoadMeasurement measurement = new LoadMeasurement(a.full());
        long rawBytes = events.stream().mapToLong(e -> e.length).sum();
        List<byte[]> earlier = events(new Random(7), EVENTS); // the same service's events of an earlier hour
        Map<Variant, Long> stored = new LinkedHashMap<>();
        for (Variant v : VARIANTS) {
            stored.put(v, storedBytes(v.config(BenchFiles.newDir("compression-size")), earlier, events));
        }
        long zstdAlone = storedBytes(ZSTD.config(BenchFiles.newDir("compression-size")).zstdDictionary(false), earlier, events);
        long zstdCold = storedBytes(ZSTD.config(BenchFiles.newDir("compression-size")), List.of(), events);
        Map<Variant, List<Double>> ratios = new LinkedHashMap<>();
        Map<Variant, Double> rateSums = new LinkedHashMap<>();
        int rounds = a.full() ? 30 : 12;
        int warmup = 2;
        long sliceMillis = 1000;
        Path d = BenchFiles.newDir("compression");
        Map<Variant, Wal> logs = new LinkedHashMap<>();
        try {
            for (Variant v : VARIANTS) {
                logs.put(v, Wal.open(v.config(d.resolve(v.label().replace(' ', '-'))).build()));
                ratios.put(v, new ArrayList<>());
                rateSums.put(v, 0.0);
            }
            for (int round = 0; round < rounds; round++) {
                Map<Variant, Double> rates = new LinkedHashMap<>();
                for (Variant v : VARIANTS) {
                    rates.put(v, rate(logs.get(v), events, sliceMillis));
                }
                if (round >= warmup) {
                    for (Variant v : VARIANTS) {
                        ratios.get(v).add(rates.get(v) / rates.get(NONE));
                        rateSums.merge(v, rates.get(v), Double::sum);
                    }
                }
            }
        } finally {
            logs.values().forEach(Wal::close);
            BenchFiles.delete(d);
        }
        int n = rounds - warmup;
        for (Variant v : VARIANTS) {
            List<Double> r = ratios.get(v);
            Collections.sort(r);
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("name", "walden local " + v.label() + " json events");
            result.put("kind", "compression");
            result.put("compression", v.label());
            if (v.codec() == Compression.ZSTD) {
                result.put("zstdLevel", v.zstdLevel());
            }
            result.put("committers", COMMITTERS);
            result.put("events", EVENTS);
            result.put("rawBytes", rawBytes);
            result.put("storedBytes", stored.get(v));
            result.put("storedRatio", LoadMeasurement.round2((double) stored.get(v) / stored.get(NONE)));
            if (v == ZSTD) {
                result.put("storedBytesWithoutDictionary", zstdAlone);
                result.put("storedBytesFreshLog", zstdCold);
            }
            result.put("commitsPerSecond", Math.round(rateSums.get(v) / n));
            result.put("rounds", n);
            result.put("medianRateRatio", LoadMeasurement.round2(r.get(n / 2)));
            result.put("p25RateRatio", LoadMeasurement.round2(r.get(n / 4)));
            result.put("p75RateRatio", LoadMeasurement.round2(r.get(3 * n / 4)));
            measurement.results().add(result);
            System.out.printf(Locale.ROOT, "%-36s stored %,d B for %,d B of JSON (%.2f x NONE); LOCAL x16 %,d commits/s, "
                            + "median ratio to NONE %.2f (p25 %.2f, p75 %.2f) over %d rounds%n", result.get("name"),
                    stored.get(v), rawBytes, result.get("storedRatio"), result.get("commitsPerSecond"),
                    result.get("medianRateRatio"), result.get("p25RateRatio"), result.get("p75RateRatio"), n);
        }
        for (int level : new int[] {1, 3, 19}) {
            measurement.results().add(zstdLevel(events, level));
        }
        measurement.results().add(dictionaryFigure(events, stored.get(NONE)));
        measurement.writeJson(a.json(), a.dir());
    }

    /** zstd at {@code level} on the events, record by record, outside the log: payload bytes out per byte in, and time. */
    private static Map<String, Object> zstdLevel(List<byte[]> events, int level) {
        byte[] out = new byte[64 << 10];
        long stored = 0;
        long raw = 0;
        long nanos = 0;
        try (ZstdCompressCtx ctx = new ZstdCompressCtx().setLevel(level)) {
            for (int pass = 0; pass < 3; pass++) { // the first two warm the JIT and the context up
                stored = 0;
                raw = 0;
                long t0 = System.nanoTime();
                for (byte[] e : events) {
                    stored += ctx.compressByteArray(out, 0, out.length, e, 0, e.length);
                    raw += e.length;
                }
                nanos = System.nanoTime() - t0;
            }
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("name", "zstd level " + level + " per record");
        r.put("kind", "compression-level");
        r.put("level", level);
        r.put("payloadRatio", LoadMeasurement.round2((double) stored / raw));
        r.put("microsPerRecord", LoadMeasurement.round2(nanos / 1e3 / events.size()));
        System.out.printf(Locale.ROOT, "%-36s %.2f of the bytes, %.2f us per record%n", r.get("name"), r.get("payloadRatio"),
                r.get("microsPerRecord"));
        return r;
    }

    /**
     * What zstd gives the same events with a dictionary trained on the first fifth of them (zstd-jni's trainer, 16 KiB),
     * measured on the rest: record by record, payload bytes plus the 4-byte prefix and the record header and
     * alignment each record costs. Outside the log: a bound on what Walden's own dictionary (trained on the first
     * MiB it appends) can buy.
     */
    private static Map<String, Object> dictionaryFigure(List<byte[]> events, long storedNone) {
        int trained = events.size() / 5;
        ZstdDictTrainer trainer = new ZstdDictTrainer(4 << 20, 16 << 10);
        for (int i = 0; i < trained; i++) {
            trainer.addSample(events.get(i));
        }
        byte[] dictionary = trainer.trainSamples();
        long stored = 0;
        long plain = 0;
        byte[] out = new byte[64 << 10];
        try (ZstdCompressCtx ctx = new ZstdCompressCtx().setLevel(WalConfig.DEFAULT_ZSTD_LEVEL).loadDict(dictionary)) {
            for (int i = trained; i < events.size(); i++) {
                byte[] e = events.get(i);
                int n = 4 + ctx.compressByteArray(out, 0, out.length, e, 0, e.length);
                stored += RecordDescriptor.aligned(RecordDescriptor.recordLength(Math.min(n, e.length)));
                plain += RecordDescriptor.aligned(RecordDescriptor.recordLength(e.length));
            }
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("name", "zstd with a 16 KiB dictionary, outside the log");
        r.put("kind", "compression-dictionary");
        r.put("storedRatio", LoadMeasurement.round2((double) stored / plain));
        System.out.printf(Locale.ROOT, "%-36s stored %.2f x NONE on the %,d events it was not trained on%n", r.get("name"),
                r.get("storedRatio"), events.size() - trained);
        return r;
    }

    /**
     * Log bytes that {@code events} take (record headers, alignment, a segment's padding and copies of the zstd dictionary
     * included) in a log that first took {@code earlier}: a log that has been running, so has trained its zstd dictionary
     * if it uses one (the first zstd payloads after every open are its samples, compressed without one). With no
     * earlier events: a log just opened, appending as fast as it can, so that its training overlaps the events.
     */
    private static long storedBytes(WalConfig.Builder config, List<byte[]> earlier, List<byte[]> events) {
        Path d = config.build().directory();
        try (Wal wal = Wal.open(config.build())) {
            for (byte[] e : earlier) {
                wal.append(e, Durability.OFF);
            }
            if (!earlier.isEmpty()) {
                Thread.sleep(2_000); // room for the training, which runs in the background
                wal.append(earlier.get(0), Durability.OFF); // the dictionary's copy in this segment, if one is due
            }
            long start = wal.insertLsn();
            for (byte[] e : events) {
                wal.append(e, Durability.OFF);
            }
            return wal.insertLsn() - start;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } finally {
            BenchFiles.delete(d);
        }
    }

    /** LOCAL commits per second of {@link #COMMITTERS} threads appending {@code events} in turn for {@code millis}. */
    static double rate(Wal wal, List<byte[]> events, long millis) throws InterruptedException {
        LongAdder commits = new LongAdder();
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch done = new CountDownLatch(COMMITTERS);
        for (int t = 0; t < COMMITTERS; t++) {
            int first = t * (EVENTS / COMMITTERS);
            Thread th = new Thread(() -> {
                try {
                    for (int i = first; !stop.get(); i = (i + 1) % EVENTS) {
                        wal.append(events.get(i), Durability.LOCAL);
                        commits.increment();
                    }
                } finally {
                    done.countDown();
                }
            }, "committer-" + t);
            th.start();
        }
        long t0 = System.nanoTime();
        Thread.sleep(millis);
        long counted = commits.sum();
        double seconds = (System.nanoTime() - t0) / 1e9;
        stop.set(true);
        done.await();
        return counted / seconds;
    }

    // ------------------------------------------------------------------ the events

    private static final String[] TYPES = {"order-placed", "order-paid", "order-shipped", "order-cancelled", "refund-issued"};
    private static final String[] CITIES = {"Lisbon", "Porto", "Madrid", "Lyon", "Hamburg", "Utrecht", "Gdansk", "Turin"};
    private static final String[] PRODUCTS = {"espresso beans 1kg", "pour-over kettle", "ceramic dripper", "paper filters",
            "hand grinder", "milk jug", "scale 0.1g", "travel mug", "cold brew bottle", "tamper 58mm"};
    private static final String[] CURRENCIES = {"EUR", "EUR", "EUR", "GBP", "PLN"};

    /** {@code count} JSON events of 200 B to 4 KiB: what an outbox or an event store holds. */
    static List<byte[]> events(Random random, int count) {
        List<byte[]> out = new ArrayList<>(count);
        long time = 1_767_225_600_000L; // 2026-01-01
        for (int i = 0; i < count; i++) {
            time += random.nextInt(5_000);
            StringBuilder b = new StringBuilder(512);
            b.append("{\"id\":\"").append(new UUID(random.nextLong(), random.nextLong())).append('"')
                    .append(",\"type\":\"").append(TYPES[random.nextInt(TYPES.length)]).append('"')
                    .append(",\"occurred_at\":\"").append(Instant.ofEpochMilli(time)).append('"')
                    .append(",\"customer\":{\"id\":").append(100_000 + random.nextInt(900_000))
                    .append(",\"city\":\"").append(CITIES[random.nextInt(CITIES.length)]).append('"')
                    .append(",\"tier\":\"").append(random.nextInt(10) == 0 ? "gold" : "standard").append("\"}")
                    .append(",\"currency\":\"").append(CURRENCIES[random.nextInt(CURRENCIES.length)]).append('"')
                    .append(",\"lines\":[");
            // Sizes from ~200 B (no lines) to ~4 KiB (about 30 lines), most of them small, as orders are.
            int lines = (int) Math.min(30, Math.floor(-Math.log(1 - random.nextDouble()) * 5));
            for (int l = 0; l < lines; l++) {
                b.append(l == 0 ? "" : ",").append("{\"sku\":\"SKU-").append(10_000 + random.nextInt(500))
                        .append("\",\"name\":\"").append(PRODUCTS[random.nextInt(PRODUCTS.length)])
                        .append("\",\"quantity\":").append(1 + random.nextInt(4))
                        .append(",\"unit_price\":").append(random.nextInt(20_000) / 100.0).append('}');
            }
            b.append("],\"total\":").append(random.nextInt(200_000) / 100.0)
                    .append(",\"source\":\"web\",\"schema_version\":3}");
            out.add(b.toString().getBytes(StandardCharsets.UTF_8));
        }
        return out;
    }
}
