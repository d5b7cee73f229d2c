package io.walden.server.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Layers the sources of the settings: the defaults, overridden by a YAML file, overridden by command-line flags.
 * Unknown keys are refused, so that a typo never silently falls back to a default.
 *
 * <p>Thread-safety: stateless; runs once, on the thread that starts the server.
 */
final class ConfigSources {
    static final Set<String> KEYS = Set.of("data-dir", "http", "durability", "sync-method", "segment-size", "wal-buffers", "transport", "flush-on-event-loop", "event-loops", "ship-flushed-only", "writer-delay-ms", "compression", "zstd-dictionary", "zstd-level",
            "auth-token", "max-batch-bytes", "max-readers", "max-connections", "max-batch-records", "stream-write-timeout-ms", "max-replicas", "tls-cert", "tls-key", "replication-listen", "replicate-from",
            "name", "sync-replicas", "remote-commit-timeout-ms", "max-slot-retained-bytes", "max-cursor-retained-bytes", "replication-secret",
            "replication-tls-cert", "replication-tls-key", "replication-tls-ca", "replication-insecure",
            "archive-to", "archive-endpoint", "archive-timeout", "archive-max-pending-bytes", "archive-when-full",
            "restore-from", "coordinator", "coordinator-session-timeout-ms");

    private ConfigSources() {
    }

    /**
     * @param yaml  a YAML file, or null
     * @param flags flags given on the command line (key without dashes to value); absent keys are not set
     * @return every setting's text, the defaults included
     */
    static Map<String, String> read(Path yaml, Map<String, String> flags) throws IOException {
        Map<String, String> v = ConfigDefaults.values();
        if (yaml != null) {
            readYaml(yaml, v);
        }
        for (Map.Entry<String, String> e : flags.entrySet()) {
            if (e.getValue() != null) {
                put(v, e.getKey(), e.getValue(), "command line");
            }
        }
        return v;
    }

    private static void readYaml(Path yaml, Map<String, String> v) throws IOException {
        // YAML 1.1 would read `durability: on` as the boolean true and `auth-token:` as null: take words as words.
        YAMLFactory factory = YAMLFactory.builder()
                .enable(YAMLParser.Feature.PARSE_BOOLEAN_LIKE_WORDS_AS_STRINGS)
                .build();
        JsonNode root = new ObjectMapper(factory).readTree(yaml.toFile());
        if (root != null && !root.isObject()) {
            throw new IllegalArgumentException(yaml + ": expected a mapping of settings");
        }
        if (root == null) {
            return;
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

    private static void put(Map<String, String> v, String key, String value, String source) {
        if (!KEYS.contains(key)) {
            throw new IllegalArgumentException(source + ": unknown setting '" + key + "' (known: "
                    + String.join(", ", new TreeSet<>(KEYS)) + ")");
        }
        v.put(key, value);
    }
}
