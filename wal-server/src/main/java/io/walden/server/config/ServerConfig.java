package io.walden.server.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.walden.core.Durability;
import io.walden.core.SyncMethod;
import io.walden.core.WalConfig;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The server's settings: defaults, overridden by a YAML file, overridden by command-line flags. Every flag of
 * {@code walden serve} has a YAML key of the same name (without the dashes in front), e.g.
 * <pre>
 * data-dir: /var/lib/walden
 * http: 127.0.0.1:7400
 * durability: on
 * sync-method: fdatasync
 * auth-token: s3cret
 * </pre>
 * Unknown keys are refused, so that a typo never silently falls back to a default.
 *
 * <p>Thread-safety: immutable once built.
 */
public final class ServerConfig {
    public static final String DEFAULT_DATA_DIR = "walden-data";
    public static final String DEFAULT_HTTP = "127.0.0.1:7400";
    static final Set<String> KEYS = Set.of("data-dir", "http", "durability", "sync-method", "segment-size", "wal-buffers", "transport", "flush-on-event-loop", "event-loops", "ship-flushed-only", "writer-delay-ms", "compression", "zstd-dictionary",
            "auth-token", "max-batch-bytes", "max-readers", "max-connections", "max-batch-records", "stream-write-timeout-ms", "max-replicas", "tls-cert", "tls-key", "replication-listen", "replicate-from",
            "name", "sync-replicas", "remote-commit-timeout-ms", "max-slot-retained-bytes", "max-cursor-retained-bytes", "replication-secret",
            "replication-tls-cert", "replication-tls-key", "replication-tls-ca", "replication-insecure",
            "archive-to", "archive-endpoint", "archive-timeout", "archive-max-pending-bytes", "archive-when-full",
            "restore-from", "coordinator", "coordinator-session-timeout-ms");
    public static final String DEFAULT_REPLICATION = "127.0.0.1:7401";

    private final Map<String, String> values;

    private ServerConfig(Map<String, String> values) {
        this.values = values;
    }

    /**
     * Builds the configuration.
     *
     * @param yaml  a YAML file, or null
     * @param flags flags given on the command line (key without dashes to value); absent keys are not set
     */
    public static ServerConfig load(Path yaml, Map<String, String> flags) throws IOException {
        Map<String, String> v = new TreeMap<>();
        v.put("data-dir", DEFAULT_DATA_DIR);
        v.put("http", DEFAULT_HTTP);
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
        if (yaml != null) {
            // YAML 1.1 would read `durability: on` as the boolean true and `auth-token:` as null: take words as words.
            YAMLFactory factory = YAMLFactory.builder()
                    .enable(com.fasterxml.jackson.dataformat.yaml.YAMLParser.Feature.PARSE_BOOLEAN_LIKE_WORDS_AS_STRINGS)
                    .build();
            JsonNode root = new ObjectMapper(factory).readTree(yaml.toFile());
            if (root != null && !root.isObject()) {
                throw new IllegalArgumentException(yaml + ": expected a mapping of settings");
            }
            if (root != null) {
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
        }
        for (Map.Entry<String, String> e : flags.entrySet()) {
            if (e.getValue() != null) {
                put(v, e.getKey(), e.getValue(), "command line");
            }
        }
        ServerConfig c = new ServerConfig(v);
        c.validate();
        return c;
    }

    private static void put(Map<String, String> v, String key, String value, String source) {
        if (!KEYS.contains(key)) {
            throw new IllegalArgumentException(source + ": unknown setting '" + key + "' (known: "
                    + String.join(", ", new java.util.TreeSet<>(KEYS)) + ")");
        }
        v.put(key, value);
    }

    private void validate() {
        httpAddress();
        replicationListen();
        if (syncReplicas() != null) {
            io.walden.replication.policy.SyncPolicy.parse(syncReplicas());
        }
        durability();
        compression();
        syncMethod();
        walConfig();
        if ((values.get("tls-cert") == null) != (values.get("tls-key") == null)) {
            throw new IllegalArgumentException("tls-cert and tls-key go together: give both PEM files, or neither");
        }
        if ((values.get("replication-tls-cert") == null) != (values.get("replication-tls-key") == null)) {
            throw new IllegalArgumentException("replication-tls-cert and replication-tls-key go together: give both PEM files, or neither");
        }
        bool("replication-insecure");
        bool("flush-on-event-loop");
        bool("ship-flushed-only");
        bool("zstd-dictionary");
        transport();
        archiveTimeout();
        io.walden.core.archive.ArchiveConfig.WhenFull.parse(values.get("archive-when-full"));
        for (String key : new String[] {"archive-to", "restore-from"}) {
            String archive = values.get(key);
            if (archive != null && !archive.startsWith("s3://") && !archive.startsWith("file:")) {
                throw new IllegalArgumentException(key + " is s3://bucket[/prefix] or file:///dir, not '" + archive + "'");
            }
        }
        if (restoreFrom() != null && replicateFrom() == null) {
            throw new IllegalArgumentException("restore-from is for a replica (with replicate-from); to build a log from an "
                    + "archive, use 'walden restore'");
        }
        if (coordinator() != null) {
            io.walden.server.group.CoordinatorUri.parse(coordinator());
            if (replicateFrom() != null) {
                throw new IllegalArgumentException("coordinator and replicate-from exclude each other: a member of a replica "
                        + "group follows the primary its coordinator names");
            }
            if (values.get("name") == null || !io.walden.replication.policy.SyncPolicy.isValidName(values.get("name"))) {
                throw new IllegalArgumentException("a member of a replica group (coordinator) needs a --name of its own "
                        + "([A-Za-z0-9_.-], 1-64 characters)");
            }
            if (values.get("replication-listen") == null) {
                throw new IllegalArgumentException("a member of a replica group (coordinator) needs --replication-listen: "
                        + "any member may become the primary");
            }
            long timeout = positive("coordinator-session-timeout-ms");
            if (timeout < 1000 || timeout > 120_000) {
                throw new IllegalArgumentException("coordinator-session-timeout-ms must be between 1000 and 120000, not " + timeout);
            }
        }
        for (String key : new String[] {"archive-max-pending-bytes", "max-batch-bytes", "max-readers", "max-connections", "max-batch-records", "stream-write-timeout-ms", "max-replicas", "max-slot-retained-bytes", "event-loops", "writer-delay-ms", "max-cursor-retained-bytes"}) {
            positive(key);
        }
    }

    /**
     * HTTP event loop threads: one per core by default (measured here: twice as many, Netty's own default, answer fewer
     * requests per second, the extra threads only trading places on the same cores).
     */
    public int eventLoops() {
        return (int) positive("event-loops");
    }

    /**
     * PostgreSQL's rule for a primary: ship only flushed records (a synchronous commit then pays both forces in a row).
     * By default records leave once written, and the replicas' forces overlap the primary's (docs/replication.md).
     */
    public boolean shipFlushedOnly() {
        return bool("ship-flushed-only");
    }

    /** A setting that must be true or false, with an error naming it otherwise. */
    private boolean bool(String key) {
        String v = values.get(key).trim();
        if (!v.equals("true") && !v.equals("false")) {
            throw new IllegalArgumentException(key + " must be true or false, got '" + v + "'");
        }
        return v.equals("true");
    }

    /** The network transport for the event loops: auto (epoll where it loads, else NIO), epoll, io_uring or nio. */
    public io.walden.server.http.Transports.Kind transport() {
        return io.walden.server.http.Transports.Kind.parse(values.get("transport"));
    }

    /**
     * Whether an event loop flushes its batch of durable appends itself when no flush is in progress (a lone request's
     * commit then costs no thread hand-off), rather than always leaving flushes to the background writer.
     */
    public boolean flushOnEventLoop() {
        return bool("flush-on-event-loop");
    }

    /** A setting that must be a positive whole number, with an error naming it otherwise. */
    private long positive(String key) {
        String v = values.get(key).trim();
        try {
            long n = Long.parseLong(v);
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw new IllegalArgumentException(key + " must be a positive whole number, got '" + v + "'");
    }

    public Path dataDir() {
        return Path.of(values.get("data-dir"));
    }

    public InetSocketAddress httpAddress() {
        return parseAddress(values.get("http"), "http");
    }

    public Durability durability() {
        return Durability.parse(values.get("durability"));
    }

    /** How appends that name none store their payloads (none, lz4, zstd; docs/format.md, "Compressed payloads"). */
    public io.walden.core.Compression compression() {
        return io.walden.core.Compression.parse(values.get("compression"));
    }

    public SyncMethod syncMethod() {
        try {
            return SyncMethod.parse(values.get("sync-method"));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("sync-method: " + e.getMessage(), e);
        }
    }

    /** The bearer token the data API and mutating admin endpoints require, or null for none. */
    public String authToken() {
        String t = values.get("auth-token");
        return t == null || t.isBlank() ? null : t;
    }

    /** PEM certificate chain for HTTPS, or null for plain HTTP. */
    public Path tlsCert() {
        return values.get("tls-cert") == null ? null : Path.of(values.get("tls-cert"));
    }

    /** PEM private key (PKCS#8) for HTTPS, or null. */
    public Path tlsKey() {
        return values.get("tls-key") == null ? null : Path.of(values.get("tls-key"));
    }

    public long maxBatchBytes() {
        return positive("max-batch-bytes");
    }

    public int maxReaders() {
        return (int) Math.min(Integer.MAX_VALUE, positive("max-readers"));
    }

    /** How long a stream may stay unable to write (its client stopped reading) before it is closed. */
    public long streamWriteTimeoutMillis() {
        return positive("stream-write-timeout-ms");
    }

    /** The most replicas a primary serves and replication slots it keeps. */
    public int maxReplicas() {
        return (int) Math.min(Integer.MAX_VALUE, positive("max-replicas"));
    }

    /** The most records one batch may hold. */
    public int maxBatchRecords() {
        return (int) Math.min(Integer.MAX_VALUE, positive("max-batch-records"));
    }

    /** Open HTTP connections beyond which a new one is answered 503 and closed. */
    public int maxConnections() {
        return (int) Math.min(Integer.MAX_VALUE, positive("max-connections"));
    }

    /**
     * The log's settings. The segment size applies to a new log; when none is given and the directory already
     * holds a log, that log's size is used (it cannot change), so a plain restart never fails on it.
     */
    public WalConfig walConfig() {
        return walConfigBuilder().build();
    }

    /** The log's settings, to be completed (a new replica takes its primary's log id, segment size and base LSN). */
    public WalConfig.Builder walConfigBuilder() {
        WalConfig.Builder b = WalConfig.builder(dataDir())
                // A primary that crashed begins a new epoch at its recovered end: its replicas may hold records it
                // shipped before flushing and then lost (docs/replication.md, "Shipping before the flush").
                // A member of a group begins an epoch when it is elected, never on its own at open.
                .newEpochAfterCrash(replicateFrom() == null && coordinator() == null)
                .segmentSize(segmentSize())
                .durability(durability())
                .compression(compression())
                .zstdDictionary(bool("zstd-dictionary"))
                .maxCursorRetainedBytes(positive("max-cursor-retained-bytes"))
                .syncMethod(syncMethod())
                .remoteCommitTimeout(java.time.Duration.ofMillis(Long.parseLong(values.get("remote-commit-timeout-ms"))))
                .writerDelay(java.time.Duration.ofMillis(positive("writer-delay-ms")));
        if (values.get("wal-buffers") != null) {
            b.walBuffers(positive("wal-buffers"));
        }
        return b;
    }

    /** The archive every sealed segment goes to (s3:// or file://), or null. */
    public String archiveTo() {
        return values.get("archive-to");
    }

    /** A replica's archive, where it fetches what its primary no longer keeps (s3:// or file://), or null. */
    public String restoreFrom() {
        return values.get("restore-from");
    }

    /** The endpoint of an S3-compatible store for archive-to and restore-from, or null (AWS). */
    public String archiveEndpoint() {
        return values.get("archive-endpoint");
    }

    /** How soon the current segment's flushed records reach the archive; zero: only sealed segments. */
    public java.time.Duration archiveTimeout() {
        return duration("archive-timeout");
    }

    /**
     * The archive's settings with its target opened (an S3 client), or null when archive-to is not set. The caller
     * hands it to the log, which closes the target.
     */
    public io.walden.core.archive.ArchiveConfig archiveConfig() {
        if (archiveTo() == null) {
            return null;
        }
        return io.walden.core.archive.ArchiveConfig.builder(
                        io.walden.core.archive.ArchiveTargets.open(archiveTo(), values.get("archive-endpoint")))
                .timeout(archiveTimeout())
                .maxPendingBytes(positive("archive-max-pending-bytes"))
                .whenFull(io.walden.core.archive.ArchiveConfig.WhenFull.parse(values.get("archive-when-full")))
                .build();
    }

    /** A duration setting: 500ms, 60s, 5m, 1h, or a plain number of seconds. */
    private java.time.Duration duration(String key) {
        String v = values.get(key).trim().toLowerCase(Locale.ROOT);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+)(ms|s|m|min|h)?").matcher(v);
        if (!m.matches()) {
            throw new IllegalArgumentException(key + " is a duration such as 500ms, 60s, 5m or 1h, not '" + values.get(key) + "'");
        }
        long n = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        switch (unit) {
            case "ms":
                return java.time.Duration.ofMillis(n);
            case "s":
                return java.time.Duration.ofSeconds(n);
            case "m":
            case "min":
                return java.time.Duration.ofMinutes(n);
            default:
                return java.time.Duration.ofHours(n);
        }
    }

    /** Where a primary listens for replicas (default 127.0.0.1:7401). */
    public InetSocketAddress replicationListen() {
        String v = values.get("replication-listen");
        return parseAddress(v == null ? DEFAULT_REPLICATION : v, "replication-listen");
    }

    /** Whether replication-listen was set: a replica serves replicas of its own (cascading) only then. */
    public boolean replicationListenSet() {
        return values.get("replication-listen") != null;
    }

    /** The shared secret of replication (a primary requires it, a replica sends it), or null for none. */
    public String replicationSecret() {
        String v = values.get("replication-secret");
        return v == null || v.isBlank() ? null : v;
    }

    /** This server's replication certificate chain (PEM): its identity as a primary, and as a replica under mutual TLS. */
    public Path replicationTlsCert() {
        return values.get("replication-tls-cert") == null ? null : Path.of(values.get("replication-tls-cert"));
    }

    public Path replicationTlsKey() {
        return values.get("replication-tls-key") == null ? null : Path.of(values.get("replication-tls-key"));
    }

    /**
     * CA certificates (PEM) of the replication peers: a replica connects over TLS and checks its primary against
     * them; a primary requires each replica to present a certificate they signed (mutual TLS).
     */
    public Path replicationTlsCa() {
        return values.get("replication-tls-ca") == null ? null : Path.of(values.get("replication-tls-ca"));
    }

    /** The explicit, logged opt-out: accept replicas on a non-loopback address without TLS and authentication. */
    public boolean replicationInsecure() {
        return Boolean.parseBoolean(values.get("replication-insecure").trim());
    }

    /** The primary to follow, or null for a primary. */
    public InetSocketAddress replicateFrom() {
        String v = values.get("replicate-from");
        return v == null ? null : parseAddress(v, "replicate-from");
    }

    /** The replica group's coordinator ({@code zk://HOST:PORT[,...]/PATH}), or null for a server on its own. */
    public String coordinator() {
        return values.get("coordinator");
    }

    /** The coordinator session's timeout: a primary's loss is noticed this long after it last reached ZooKeeper. */
    public int coordinatorSessionTimeoutMillis() {
        return (int) Long.parseLong(values.get("coordinator-session-timeout-ms"));
    }

    /** The most log a replication slot may hold back before it is dropped. */
    public long maxSlotRetainedBytes() {
        return positive("max-slot-retained-bytes");
    }

    /** This replica's name in the primary's synchronous policy. */
    public String name() {
        String n = values.get("name");
        return n != null ? n : "walden-" + ProcessHandle.current().pid();
    }

    /** The synchronous policy ({@code FIRST n (a, b)} / {@code ANY n (a, b)}), or null for none. */
    public String syncReplicas() {
        String v = values.get("sync-replicas");
        return v == null || v.isBlank() ? null : v;
    }

    /** True when the log directory already holds a log (a replica then keeps its own identity). */
    public boolean hasLog() {
        return io.walden.core.recovery.ControlFile.exists(dataDir());
    }

    private long segmentSize() {
        String given = values.get("segment-size");
        if (given != null) {
            try {
                return Long.parseLong(given.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("segment-size must be a number of bytes, got '" + given + "'", e);
            }
        }
        if (io.walden.core.recovery.ControlFile.exists(dataDir())) {
            try (io.walden.core.recovery.ControlFile cf = io.walden.core.recovery.ControlFile.open(dataDir())) {
                return cf.read().segmentSize();
            } catch (IOException e) {
                // an unreadable control file is the log's business: Wal.open reports it properly
            }
        }
        return WalConfig.DEFAULT_SEGMENT_SIZE;
    }

    /** True when the HTTP address is a loopback address (127.0.0.0/8, ::1). */
    public boolean loopbackOnly() {
        return httpAddress().getAddress().isLoopbackAddress();
    }

    /** HOST:PORT (IPv6 hosts in brackets); the host must resolve locally. */
    public static InetSocketAddress parseAddress(String text, String what) {
        int colon = text == null ? -1 : text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new IllegalArgumentException(what + ": expected HOST:PORT, got '" + text + "'");
        }
        String host = text.substring(0, colon).replace("[", "").replace("]", "");
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + ": bad port in '" + text + "'", e);
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException(what + ": port out of range in '" + text + "'");
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(host), port);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(what + ": unknown host '" + host + "'", e);
        }
    }

    @Override
    public String toString() {
        Map<String, String> shown = new TreeMap<>(values);
        if (shown.containsKey("auth-token")) {
            shown.put("auth-token", "***");
        }
        if (shown.containsKey("replication-secret")) {
            shown.put("replication-secret", "***");
        }
        return shown.toString();
    }
}
