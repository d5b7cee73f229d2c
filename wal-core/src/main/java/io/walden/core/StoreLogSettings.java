package io.walden.core;

import io.walden.core.internal.segment.SegmentFiles;

import java.io.IOException;
import java.io.Reader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The settings a store's log was given ({@link WalStore#create(String, java.util.function.Consumer)}, {@link
 * WalStore#reconfigure}), whether or not they equalled the store's defaults then: kept beside the log in
 * {@value #FILE}, so that the log has them again when the store reopens it, while what it was never given follows the
 * store's defaults as they are then. Kept are the
 * plain values (numbers, flags, levels, durations): every component of the records a builder lists in
 * {@link WalConfig.Builder#keptSettings()}, each named as the builder's method that sets it, so that a setting added to
 * one of those records is kept with nothing added here. Not kept: the log's identity ({@link IdentitySettings}, which
 * its files hold), and objects (an archive, a clock, a sync strategy), which come from the store's configuration at every
 * open ({@link WalStoreConfig.Builder#logSettings}). The segment size is read from the log's control file at every open
 * (the store sets it), whatever the defaults say by then.
 *
 * <p>The file is Java properties, one {@code name=value} line per setting kept, written into the log's directory before
 * the directory gets its name (so a crash leaves either a log with its settings or no log). Its names are a format: a
 * component renamed would leave what logs kept under the old name unread.
 *
 * <p>Thread-safety: stateless.
 */
final class StoreLogSettings {
    static final String FILE = "walden.log-settings";

    private StoreLogSettings() {
    }

    /**
     * The plain settings {@code settings} sets, as text, whether or not they differ from the defaults: a value a caller
     * chose is kept with the log even when it equals the store's default of the moment, so that a later default does
     * not change it. Found by applying {@code settings} over the defaults and over the defaults with every kept value
     * shifted: what it set is the same in both; what it left alone is not.
     */
    static Map<String, String> chosen(Supplier<WalConfig.Builder> defaults, Consumer<WalConfig.Builder> settings) {
        WalConfig.Builder plain = defaults.get();
        settings.accept(plain);
        WalConfig.Builder shifted = defaults.get();
        for (Record r : shifted.keptSettings()) {
            shifted.keep(shift(r));
        }
        settings.accept(shifted);
        Map<String, String> out = new TreeMap<>();
        List<Record> p = plain.keptSettings();
        List<Record> q = shifted.keptSettings();
        for (int i = 0; i < p.size(); i++) {
            for (RecordComponent component : p.get(i).getClass().getRecordComponents()) {
                Object v = valueOf(component, p.get(i));
                if (Objects.equals(v, valueOf(component, q.get(i)))) {
                    out.put(component.getName(), text(v));
                }
            }
        }
        return out;
    }

    /**
     * What a log's file holds once {@code changes} apply: over what it held ({@code before}), or instead of it
     * ({@code replacing}); the segment size stays what it was (its control file's), whatever the changes say.
     */
    static Map<String, String> changed(Map<String, String> before, Supplier<WalConfig.Builder> defaults,
                                       Consumer<WalConfig.Builder> changes, boolean replacing) {
        Map<String, String> after = new TreeMap<>(replacing ? Map.of() : before);
        after.putAll(chosen(defaults, changes));
        after.remove("segmentSize");
        if (before.containsKey("segmentSize")) {
            after.put("segmentSize", before.get("segmentSize"));
        }
        return after;
    }

    /** {@code settings} with every value changed (a number by one, a flag flipped, a duration by a nanosecond...). */
    private static Record shift(Record settings) {
        RecordComponent[] components = settings.getClass().getRecordComponents();
        Object[] values = new Object[components.length];
        for (int i = 0; i < components.length; i++) {
            Object v = valueOf(components[i], settings);
            Class<?> t = components[i].getType();
            values[i] = t == long.class ? (Long) v + 1 : t == int.class ? (Integer) v + 1
                    : t == boolean.class ? !(Boolean) v
                    : t == Duration.class ? (v == null ? Duration.ofNanos(1) : ((Duration) v).plusNanos(1))
                    : t.isEnum() ? next((Enum<?>) v, t) : v;
        }
        return construct(null, settings.getClass(), components, values);
    }

    private static Object next(Enum<?> v, Class<?> type) {
        Object[] all = type.getEnumConstants();
        return all[(v.ordinal() + 1) % all.length];
    }

    private static String text(Object v) {
        return v == null ? "" : v instanceof Enum<?> e ? e.name() : v.toString();
    }

    /**
     * Writes {@code overrides} into {@code dir}, replacing what it held: into a temporary file, forced, renamed over the
     * file, the directory forced. So a crash leaves the old settings or the new, whole ({@link WalStore#reconfigure}).
     */
    static void write(Path dir, Map<String, String> overrides) throws IOException {
        Properties p = new Properties();
        p.putAll(overrides);
        StringWriter text = new StringWriter();
        p.store(text, "settings this log was created with, beside the store's defaults (WalStore)");
        Path file = dir.resolve(FILE);
        Path next = dir.resolve(FILE + ".next");
        Files.writeString(next, text.toString(), StandardCharsets.UTF_8);
        try (var ch = java.nio.channels.FileChannel.open(next, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        Files.move(next, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        SegmentFiles.forceDirectory(dir);
    }

    /** What {@code dir}'s file holds, as text (empty when it has none). */
    static Map<String, String> read(Path dir) {
        Map<String, String> out = new TreeMap<>();
        Path file = dir.resolve(FILE);
        if (!Files.exists(file)) {
            return out;
        }
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
        p.forEach((k, v) -> out.put((String) k, (String) v));
        return out;
    }

    /** Sets on {@code target} the settings kept in {@code dir} (none when it has no file). */
    static void apply(Path dir, WalConfig.Builder target) {
        Path file = dir.resolve(FILE);
        Map<String, String> p = read(dir);
        if (p.isEmpty()) {
            return;
        }
        for (Record settings : target.keptSettings()) {
            RecordComponent[] components = settings.getClass().getRecordComponents();
            Object[] values = new Object[components.length];
            boolean kept = false;
            for (int i = 0; i < components.length; i++) {
                values[i] = valueOf(components[i], settings);
                String value = p.get(components[i].getName());
                if (value != null) {
                    values[i] = parse(file, components[i], value);
                    kept = true;
                }
            }
            if (kept) {
                target.keep(construct(file, settings.getClass(), components, values));
            }
        }
    }

    private static Object valueOf(RecordComponent component, Record settings) {
        try {
            return component.getAccessor().invoke(settings);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read " + component, e);
        }
    }

    private static Object parse(Path file, RecordComponent component, String value) {
        Class<?> type = component.getType();
        try {
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
            if (type.isEnum()) {
                @SuppressWarnings({"unchecked", "rawtypes"})
                Object e = Enum.valueOf((Class<Enum>) type, value);
                return e;
            }
        } catch (RuntimeException e) {
            throw unreadable(file, component.getName() + "=" + value + " (" + e.getMessage() + ")", e);
        }
        throw new IllegalStateException(component + " is kept but not a plain value: " + type);
    }

    /** The record of {@code type} with {@code values}, through its canonical constructor (which checks them). */
    private static Record construct(Path file, Class<? extends Record> type, RecordComponent[] components, Object[] values) {
        Class<?>[] types = new Class<?>[components.length];
        for (int i = 0; i < components.length; i++) {
            types[i] = components[i].getType();
        }
        try {
            return type.getDeclaredConstructor(types).newInstance(values);
        } catch (InvocationTargetException e) {
            throw unreadable(file, e.getCause().getMessage(), e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot construct " + type, e);
        }
    }

    private static WalException unreadable(Path file, String why, Throwable cause) {
        return new WalException("the log settings in " + file + " cannot be read: " + why, cause);
    }
}
