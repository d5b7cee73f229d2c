package io.walden.core;

import io.walden.core.internal.segment.SegmentFiles;

import java.io.IOException;
import java.io.Reader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The settings a store's log was created with, where they differ from the store's defaults ({@link WalStore#create(
 * String, java.util.function.Consumer)}): kept beside the log in {@value #FILE}, so that the log has them again when
 * the store reopens it, while what it left at the default follows the store's defaults as they are then. Only plain
 * values are kept (numbers, flags, levels, durations: every {@link WalSettings} field of such a type, each declared
 * once there); objects (an archive, a clock, a sync strategy) come from the store's configuration at every open
 * ({@link WalStoreConfig.Builder#logSettings}). The segment size is read from the log's control file at every open
 * (the store sets it), whatever the defaults say by then.
 *
 * <p>The file is Java properties, one {@code field=value} line per setting kept, written into the log's directory before
 * the directory gets its name (so a crash leaves either a log with its settings or no log).
 *
 * <p>Thread-safety: stateless.
 */
final class StoreLogSettings {
    static final String FILE = "walden.log-settings";
    /** Fields that are the log's identity or its place, never a setting to keep. */
    private static final List<String> NOT_KEPT = List.of("directory", "logId", "baseLsn");

    private StoreLogSettings() {
    }

    /** The plain settings of {@code chosen} that differ from {@code defaults}, as text. */
    static Map<String, String> overrides(WalSettings defaults, WalSettings chosen) {
        Map<String, String> out = new TreeMap<>();
        for (Field f : keptFields()) {
            try {
                Object d = f.get(defaults);
                Object c = f.get(chosen);
                if (!Objects.equals(d, c)) {
                    out.put(f.getName(), c == null ? "" : c instanceof Enum<?> e ? e.name() : c.toString());
                }
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
        return out;
    }

    /** Writes {@code overrides} into {@code dir} and forces the file. */
    static void write(Path dir, Map<String, String> overrides) throws IOException {
        Properties p = new Properties();
        p.putAll(overrides);
        StringWriter text = new StringWriter();
        p.store(text, "settings this log was created with, beside the store's defaults (WalStore)");
        Path file = dir.resolve(FILE);
        Files.writeString(file, text.toString(), StandardCharsets.UTF_8);
        try (var ch = java.nio.channels.FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        SegmentFiles.forceDirectory(dir);
    }

    /** Sets on {@code target} the settings kept in {@code dir} (none when it has no file). */
    static void apply(Path dir, WalSettings target) {
        Path file = dir.resolve(FILE);
        if (!Files.exists(file)) {
            return;
        }
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
        for (Field f : keptFields()) {
            String value = p.getProperty(f.getName());
            if (value == null) {
                continue;
            }
            try {
                f.set(target, parse(f.getType(), value));
            } catch (IllegalAccessException | RuntimeException e) {
                throw new WalException("the log settings in " + file + " cannot be read: " + f.getName() + "=" + value
                        + " (" + e.getMessage() + ")", e);
            }
        }
    }

    private static Object parse(Class<?> type, String value) {
        if (type == long.class) {
            return Long.parseLong(value);
        }
        if (type == int.class) {
            return Integer.parseInt(value);
        }
        if (type == boolean.class) {
            return Boolean.parseBoolean(value);
        }
        if (type == Duration.class) {
            return value.isEmpty() ? null : Duration.parse(value);
        }
        @SuppressWarnings({"unchecked", "rawtypes"})
        Object e = Enum.valueOf((Class<Enum>) type, value);
        return e;
    }

    /** Every non-static field of {@link WalSettings} with a plain type, but the log's identity and place. */
    private static List<Field> keptFields() {
        List<Field> out = new ArrayList<>();
        for (Field f : WalSettings.class.getDeclaredFields()) {
            Class<?> t = f.getType();
            boolean plain = t == long.class || t == int.class || t == boolean.class || t == Duration.class || t.isEnum();
            if (!Modifier.isStatic(f.getModifiers()) && plain && !NOT_KEPT.contains(f.getName())) {
                f.setAccessible(true);
                out.add(f);
            }
        }
        return out;
    }
}
