package io.walden.server.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Iterator;
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
    /** A setting's text and where it came from (for errors). */
    record Given(String text, String source) {
    }

    private ConfigSources() {
    }

    /**
     * @param yaml  a YAML file, or null
     * @param flags flags given on the command line (key without dashes to value); a null value is not set
     * @return every setting's text by key, the defaults included
     */
    static Map<String, Given> read(Path yaml, Map<String, String> flags) throws IOException {
        Map<String, Given> v = new HashMap<>();
        for (Setting<?> s : ServerSettings.ALL) {
            String d = s.defaultValue();
            if (d != null) {
                v.put(s.key(), new Given(d, "the default"));
            }
        }
        if (yaml != null) {
            readYaml(yaml, v);
        }
        for (Map.Entry<String, String> e : flags.entrySet()) {
            if (e.getValue() != null) {
                put(v, e.getKey(), e.getValue(), "--" + e.getKey());
            }
        }
        return v;
    }

    private static void readYaml(Path yaml, Map<String, Given> v) throws IOException {
        // YAML 1.1 would read `durability: on` as the boolean true and `auth-token:` as null: take words as words.
        YAMLFactory factory = YAMLFactory.builder()
                .enable(YAMLParser.Feature.PARSE_BOOLEAN_LIKE_WORDS_AS_STRINGS)
                .build();
        JsonNode root = new ObjectMapper(factory).readTree(yaml.toFile());
        if (root == null || root.isMissingNode()) {
            return; // nothing but comments (the template with every setting commented out)
        }
        if (!root.isObject()) {
            throw new IllegalArgumentException(yaml + ": expected a mapping of settings");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode value = e.getValue();
            if (value.isNull() || value.isMissingNode()) {
                throw new IllegalArgumentException(yaml + ": '" + e.getKey() + "' has no value (remove the key to use the default)");
            }
            if (!value.isValueNode()) {
                throw new IllegalArgumentException(yaml + ": '" + e.getKey() + "' must be a single value");
            }
            put(v, e.getKey(), value.asText(), yaml.toString());
        }
    }

    private static void put(Map<String, Given> v, String name, String value, String source) {
        Setting<?> s = ServerSettings.named(name);
        if (s == null) {
            TreeSet<String> known = new TreeSet<>();
            ServerSettings.ALL.forEach(k -> known.add(k.key()));
            throw new IllegalArgumentException(source + ": unknown setting '" + name + "' (known: "
                    + String.join(", ", known) + ")");
        }
        v.put(s.key(), new Given(value, source));
    }
}
