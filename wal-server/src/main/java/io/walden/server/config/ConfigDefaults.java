package io.walden.server.config;

import java.util.Map;
import java.util.TreeMap;

/**
 * The value of every setting that has a default, before the YAML file and the flags override it. Settings without
 * one (auth-token, tls-cert, replicate-from...) stay unset, which turns the feature off.
 *
 * <p>Thread-safety: stateless; each call builds a new map.
 */
final class ConfigDefaults {
    private ConfigDefaults() {
    }

    /** A new, modifiable map of the defaults, sorted by key. */
    static Map<String, String> values() {
        Map<String, String> v = new TreeMap<>();
        v.put("data-dir", ServerConfig.DEFAULT_DATA_DIR);
        v.put("http", ServerConfig.DEFAULT_HTTP);
        v.put("durability", "on");
        v.put("sync-method", "fdatasync");
        v.put("max-batch-bytes", Long.toString(64L << 20));
        v.put("max-readers", "32");
        v.put("max-connections", "1024");
        v.put("max-batch-records", "100000");
        v.put("stream-write-timeout-ms", "30000");
        v.put("max-replicas", "16");
        v.put("replication-insecure", "false");
        v.put("transport", "auto");
        v.put("flush-on-event-loop", "true");
        v.put("ship-flushed-only", "false");
        v.put("zstd-dictionary", "true");
        v.put("zstd-level", Integer.toString(io.walden.core.record.PayloadCompressor.DEFAULT_ZSTD_LEVEL));
        v.put("writer-delay-ms", "200");
        v.put("compression", "none");
        v.put("event-loops", Integer.toString(Runtime.getRuntime().availableProcessors()));
        v.put("remote-commit-timeout-ms", "0");
        v.put("max-slot-retained-bytes", Long.toString(4L << 30));
        v.put("max-cursor-retained-bytes", Long.toString(4L << 30));
        v.put("archive-timeout", "60s");
        v.put("archive-max-pending-bytes", Long.toString(4L << 30));
        v.put("archive-when-full", "block");
        v.put("coordinator-session-timeout-ms", "6000");
        return v;
    }
}
