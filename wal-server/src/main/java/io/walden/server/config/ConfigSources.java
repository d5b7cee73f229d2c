package io.walden.server.config;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeSet;

/**
 * Layers the sources of the settings ({@link ServerSettings}): the defaults, overridden by a YAML file, overridden by
 * command-line flags. Unknown keys are refused, naming the known ones, so that a typo never silently falls back to a
 * default; an older name of a setting (an alias) counts as the setting.
 *
 * <p>Thread-safety: stateless; runs once, on the thread that starts the server.
 */
final class ConfigSources {
    /**
     * A setting's text and where it was given, as errors name it: {@code --writer-delay-ms} (the flag as typed),
     * {@code walden.yaml: writer-delay} (the file and its key), or {@code the default of writer-delay}.
     */
    record Given(String text, String where) {
    }

    /** The key under which the file declares named logs. */
    static final String LOGS = "logs";

    private ConfigSources() {
    }

    /**
     * @param yaml  a YAML file, or null
     * @param flags flags given on the command line (key without dashes to value); a null value is not set
     * @return every setting's text by key, the defaults included
     */
    static Map<String, Given> read(Path yaml, Map<String, String> flags) {
        Map<String, Given> v = new HashMap<>();
        for (Setting<?> s : ServerSettings.ALL) {
            String d = s.defaultValue();
            if (d != null) {
                v.put(s.key(), new Given(d, "the default of " + s.key()));
            }
        }
        if (yaml != null) {
            readYaml(yaml, v);
        }
        for (Map.Entry<String, String> e : flags.entrySet()) {
            if (e.getValue() != null) {
                put(v, e.getKey(), e.getValue(), "--" + e.getKey(), "--" + e.getKey());
            }
        }
        return v;
    }

    private static void readYaml(Path yaml, Map<String, Given> v) {
        JsonNode root = parse(yaml, "--config ");
        if (root == null || root.isMissingNode()) {
            return; // nothing but comments (the template with every setting commented out)
        }
        if (!root.isObject()) {
            throw new IllegalArgumentException(yaml + ": expected a mapping of settings");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getKey().equals(LOGS)) {
                continue; // the named logs' own settings: declaredLogs
            }
            JsonNode value = e.getValue();
            if (value.isNull() || value.isMissingNode()) {
                value = TextNode.valueOf(""); // refused by put(), as every value left empty
            }
            if (!value.isValueNode()) {
                throw new IllegalArgumentException(yaml + ": '" + e.getKey() + "' must be a single value");
            }
            put(v, e.getKey(), value.asText(), yaml.toString(), yaml + ": " + e.getKey());
        }
    }

    /**
     * The named logs declared under {@code logs:} in the file, each with its own settings as text (a {@code null} text:
     * the setting given as null), in the file's order; {@code PerLogSettings} reads them.
     * <pre>
     * logs:
     *   orders: {retention-time: 7d, durability: local}
     *   audit: {}
     * </pre>
     */
    static Map<String, Map<String, String>> declaredLogs(Path yaml) {
        Map<String, Map<String, String>> out = new LinkedHashMap<>();
        JsonNode root = yaml == null ? null : parse(yaml, "--config ");
        JsonNode logs = root == null || !root.isObject() ? null : root.get(LOGS);
        if (logs == null || logs.isNull()) {
            return out;
        }
        if (!logs.isObject()) {
            throw new IllegalArgumentException(yaml + ": logs must be a mapping of log names to their settings");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = logs.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> log = it.next();
            Map<String, String> settings = new LinkedHashMap<>();
            JsonNode given = log.getValue();
            if (given != null && !given.isNull()) {
                if (!given.isObject()) {
                    throw new IllegalArgumentException(yaml + ": logs." + log.getKey()
                            + " must be a mapping of settings (or {} for the server's)");
                }
                for (Iterator<Map.Entry<String, JsonNode>> s = given.fields(); s.hasNext(); ) {
                    Map.Entry<String, JsonNode> setting = s.next();
                    JsonNode v = setting.getValue();
                    if (v != null && !v.isNull() && !v.isValueNode()) {
                        throw new IllegalArgumentException(yaml + ": logs." + log.getKey() + "." + setting.getKey()
                                + " must be a single value");
                    }
                    settings.put(setting.getKey(), v == null || v.isNull() ? null : v.asText());
                }
            }
            out.put(log.getKey(), settings);
        }
        return out;
    }

    /**
     * The file's tree (null for a file of nothing but comments), or an error naming the file and what is wrong with it
     * (where, for a syntax error); {@code flag} is put before the file's name when it cannot be read ({@code --config }).
     */
    static JsonNode parse(Path yaml, String flag) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(yaml);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException(flag + yaml + ": no such file");
        } catch (IOException e) {
            throw new IllegalArgumentException(flag + yaml + ": cannot read it: " + reason(e));
        }
        return parse(yaml, bytes);
    }

    /** The tree of {@code bytes}, the contents of {@code yaml} (null for nothing but comments), as {@link #parse(Path, String)}. */
    static JsonNode parse(Path yaml, byte[] bytes) {
        // YAML 1.1 would read `durability: on` as the boolean true and `auth-token:` as null: take words as words.
        YAMLFactory factory = YAMLFactory.builder()
                .enable(YAMLParser.Feature.PARSE_BOOLEAN_LIKE_WORDS_AS_STRINGS)
                .build();
        try {
            return new ObjectMapper(factory).readTree(bytes);
        } catch (JsonProcessingException e) {
            JsonLocation at = e.getLocation();
            String problem = e.getOriginalMessage().lines().findFirst().orElse("").trim();
            throw new IllegalArgumentException(yaml + (at == null ? "" : ": line " + at.getLineNr() + ", column "
                    + at.getColumnNr()) + ": not valid YAML: " + problem);
        } catch (IOException e) {
            throw new IllegalArgumentException(yaml + ": cannot read it: " + reason(e));
        }
    }

    /** What the operating system said, without the exception's class. */
    private static String reason(IOException e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof FileSystemException f && f.getReason() != null) {
            return f.getReason();
        }
        return e.getMessage() != null ? e.getMessage() : "an I/O error";
    }

    /**
     * Records a setting's text, refusing an unknown name and an empty text: a key or flag left empty ({@code auth-token:}
     * with nothing after it, {@code --auth-token "$UNSET"}) is a mistake that must not fall back to the default (no token).
     */
    private static void put(Map<String, Given> v, String name, String value, String source, String where) {
        Setting<?> s = ServerSettings.named(name);
        if (s == null) {
            TreeSet<String> known = new TreeSet<>();
            ServerSettings.ALL.forEach(k -> known.add(k.key()));
            throw new IllegalArgumentException(source + ": unknown setting '" + name + "' (known: "
                    + String.join(", ", known) + ")");
        }
        if (value.isBlank()) {
            throw new IllegalArgumentException(where + ": has no value (remove it to use the default)");
        }
        v.put(s.key(), new Given(value, where));
    }
}
