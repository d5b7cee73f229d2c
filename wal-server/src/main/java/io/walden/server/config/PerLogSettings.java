package io.walden.server.config;

import io.walden.core.Compression;
import io.walden.core.Durability;
import io.walden.core.WalConfig;
import io.walden.server.logging.Units;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

import static io.walden.server.config.ServerSettings.COMPRESSION;
import static io.walden.server.config.ServerSettings.DURABILITY;
import static io.walden.server.config.ServerSettings.MAX_RECORD_SIZE;
import static io.walden.server.config.ServerSettings.RETENTION_BYTES;
import static io.walden.server.config.ServerSettings.RETENTION_TIME;
import static io.walden.server.config.ServerSettings.SEGMENT_SIZE;

/**
 * The settings a named log may have of its own (docs/operations.md, "Named logs"): each is one of the server's settings
 * ({@link ServerSettings}), whose value there is every log's default, overridden per log at its creation
 * ({@code POST /v1/logs}), by {@code PATCH /v1/logs/{log}}, or under {@code logs:} in walden.yaml. Declared once here:
 * the key (the server setting's), how it sets a log's {@link WalConfig.Builder}, how it reads back from a log's
 * {@link WalConfig}, and whether it may change once the log exists.
 *
 * <p>Values are given as the setting takes them on the command line ({@code "7d"}, {@code "100GiB"}, {@code "lz4"}), a
 * size also as a number of bytes; {@code null} lifts a retention limit. They are shown back in the same form.
 *
 * <p>Thread-safety: immutable.
 */
public final class PerLogSettings {
    /**
     * One setting a log may have of its own.
     *
     * @param setting   the server's setting, whose value is the default
     * @param live      whether {@code PATCH} may change it (the segment size is fixed when the log is created)
     * @param nullable  whether {@code null} is a value (no limit)
     * @param apply     sets it on a log's builder ({@code null} when {@code nullable})
     * @param effective reads the log's value back, as the setting shows it
     */
    public record Entry(Setting<?> setting, boolean live, boolean nullable, BiConsumer<WalConfig.Builder, Object> apply,
                        Function<WalConfig, String> effective) {
        public String key() {
            return setting.key();
        }
    }

    /** Every per-log setting, in the order a log's description lists them. */
    public static final List<Entry> ALL = List.of(
            new Entry(RETENTION_TIME, true, true, (b, v) -> b.retentionTime((Duration) v),
                    c -> c.retentionTime() == null ? null : Units.duration(c.retentionTime())),
            new Entry(RETENTION_BYTES, true, true, (b, v) -> b.retentionBytes(v == null ? 0 : (Long) v),
                    c -> c.retentionBytes() == 0 ? null : Units.size(c.retentionBytes())),
            new Entry(COMPRESSION, true, false, (b, v) -> b.compression((Compression) v),
                    c -> c.compression().configName()),
            new Entry(DURABILITY, true, false, (b, v) -> b.durability((Durability) v),
                    c -> c.durability().configName()),
            new Entry(SEGMENT_SIZE, false, false, (b, v) -> b.segmentSize((Long) v),
                    c -> Units.size(c.segmentSize())),
            new Entry(MAX_RECORD_SIZE, true, false, PerLogSettings::applyMaxRecordSize,
                    c -> Units.size(c.maxPayloadSize())));

    private PerLogSettings() {
    }

    /** The per-log setting of {@code key}, or null. */
    public static Entry named(String key) {
        for (Entry e : ALL) {
            if (e.key().equals(key)) {
                return e;
            }
        }
        return null;
    }

    /**
     * Reads a log's own settings from their texts ({@code null}: no limit, where that is a value).
     *
     * @param texts    key to text, in the order given
     * @param where    where they were given, for errors ({@code walden.yaml: logs.orders}, {@code settings})
     * @param creating whether the log is being created (else a setting fixed at creation is refused)
     * @throws IllegalArgumentException naming the key and the value that is unknown, wrong or not changeable
     */
    public static Map<Entry, Object> read(Map<String, String> texts, String where, boolean creating) {
        Map<Entry, Object> out = new LinkedHashMap<>();
        texts.forEach((key, text) -> {
            Entry e = named(key);
            if (e == null) {
                throw new IllegalArgumentException(where + ": '" + key + "' is not a setting a log may have of its own "
                        + "(known: " + String.join(", ", keys()) + ")");
            }
            if (!creating && !e.live()) {
                throw new IllegalArgumentException(where + ": " + key + " is fixed when the log is created");
            }
            if (text == null) {
                if (!e.nullable()) {
                    throw new IllegalArgumentException(where + ": " + key + " must have a value");
                }
                out.put(e, null);
            } else {
                out.put(e, e.setting().read(text, where + ": " + key));
            }
        });
        return out;
    }

    /** What sets {@code values} on a log's builder. */
    public static Consumer<WalConfig.Builder> applier(Map<Entry, Object> values) {
        Map<Entry, Object> copy = Collections.unmodifiableMap(new LinkedHashMap<>(values));
        return b -> copy.forEach((e, v) -> e.apply().accept(b, v));
    }

    /** A log's every per-log setting as it is in force, keyed as given ({@code null}: no limit). */
    public static Map<String, String> describe(WalConfig c) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Entry e : ALL) {
            out.put(e.key(), e.effective().apply(c));
        }
        return out;
    }

    /** The keys, sorted. */
    public static TreeSet<String> keys() {
        TreeSet<String> keys = new TreeSet<>();
        ALL.forEach(e -> keys.add(e.key()));
        return keys;
    }

    /**
     * A named log's largest record, with the smallest WAL buffers that hold it when the named logs' default ones
     * (4 MiB) cannot: a log's own {@code max-record-size} always fits its own buffers.
     */
    private static void applyMaxRecordSize(WalConfig.Builder b, Object bytes) {
        int max = maxRecordSize((Long) bytes);
        b.maxPayloadSize(max);
        long ring = LogConfigs.ringFor(max);
        if (ring > LogConfigs.NAMED_LOG_WAL_BUFFERS) {
            b.walBuffers(ring);
        }
    }

    /** A record size as the log takes it (an int), refusing one no record could have. */
    static int maxRecordSize(long bytes) {
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("must be under 2GiB, not " + Units.size(bytes));
        }
        return (int) bytes;
    }
}
