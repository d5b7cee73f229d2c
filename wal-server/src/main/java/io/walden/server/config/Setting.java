package io.walden.server.config;

import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * One setting of {@code walden serve}, declared once in {@link ServerSettings}: its key (the flag is {@code --key},
 * the YAML key is {@code key}), the type its text is read as, its default, and the help an operator reads. The
 * flags, the YAML file, the defaults and {@code --help} all come from this declaration.
 *
 * @param key      the name: {@code --key} on the command line, {@code key:} in YAML
 * @param label    what a value looks like in {@code --help} ({@code SIZE}, {@code DURATION}, {@code HOST:PORT})
 * @param parse    reads the text (from a flag, YAML or the default) into the value; its errors say what is expected,
 *                 and the caller names the key
 * @param defaultText the default's text (read by {@code parse} like any other), or null: unset, the feature off
 * @param help     what it does, for {@code --help} (the default is appended there from {@code defaultText})
 * @param aliases  older names, still accepted as flags and YAML keys with the same meaning
 * @param secret   hidden in logs and {@link ServerConfig#toString()}
 * @param flag     a boolean that may be given as a bare {@code --key} (meaning true)
 * @param machineDefault whether the default is worked out on the machine the server starts on (one event loop per
 *                 core): the configuration template then shows no value for it
 */
public record Setting<T>(String key, String label, Function<String, T> parse, Supplier<String> defaultText, String help,
                         List<String> aliases, boolean secret, boolean flag, boolean machineDefault) {
    public Setting {
        Objects.requireNonNull(key);
        Objects.requireNonNull(parse);
        Objects.requireNonNull(help);
        aliases = List.copyOf(aliases);
    }

    /** The default's text now (a default may depend on the machine, e.g. one event loop per core), or null. */
    public String defaultValue() {
        return defaultText == null ? null : defaultText.get();
    }

    /**
     * Reads {@code text} as this setting's value, or fails naming the setting where it was given ({@code where}: the
     * flag, or the file and its key).
     */
    T read(String text, String where) {
        try {
            return parse.apply(text.trim());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
        }
    }

    /** Whether {@code name} names this setting (its key or an alias). */
    boolean named(String name) {
        return key.equals(name) || aliases.contains(name);
    }

    Setting<T> alias(String name) {
        return new Setting<>(key, label, parse, defaultText, help, concat(aliases, name), secret, flag, machineDefault);
    }

    Setting<T> secretValue() {
        return new Setting<>(key, label, parse, defaultText, help, aliases, true, flag, machineDefault);
    }

    private static List<String> concat(List<String> names, String name) {
        return Stream.concat(names.stream(), Stream.of(name)).toList();
    }

    @Override
    public String toString() {
        return key;
    }
}
