package io.walden.server.config;

import io.walden.core.Durability;
import io.walden.core.SyncMethod;
import io.walden.core.WalConfig;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.Map;

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
 * Unknown keys are refused, so that a typo never silently falls back to a default. The sources are read by
 * {@link ConfigSources}, the values checked by {@link ConfigValidation}; this class gives each setting its type.
 *
 * <p>Thread-safety: immutable once built.
 */
public final class ServerConfig {
    public static final String DEFAULT_DATA_DIR = "walden-data";
    public static final String DEFAULT_HTTP = "127.0.0.1:7400";
    public static final String DEFAULT_REPLICATION = "127.0.0.1:7401";

    private final Settings settings;

    private ServerConfig(Settings settings) {
        this.settings = settings;
    }

    /**
     * Builds the configuration.
     *
     * @param yaml  a YAML file, or null
     * @param flags flags given on the command line (key without dashes to value); absent keys are not set
     */
    public static ServerConfig load(Path yaml, Map<String, String> flags) throws IOException {
        ServerConfig c = new ServerConfig(new Settings(ConfigSources.read(yaml, flags)));
        ConfigValidation.validate(c, c.settings);
        return c;
    }

    /**
     * HTTP event loop threads: one per core by default (measured here: twice as many, Netty's own default, answer fewer
     * requests per second, the extra threads only trading places on the same cores).
     */
    public int eventLoops() {
        return (int) settings.positive("event-loops");
    }

    /**
     * PostgreSQL's rule for a primary: ship only flushed records (a synchronous commit then pays both forces in a row).
     * By default records leave once written, and the replicas' forces overlap the primary's (docs/replication.md).
     */
    public boolean shipFlushedOnly() {
        return settings.bool("ship-flushed-only");
    }

    /** The network transport for the event loops: auto (epoll where it loads, else NIO), epoll, io_uring or nio. */
    public io.walden.server.http.Transports.Kind transport() {
        return io.walden.server.http.Transports.Kind.parse(settings.get("transport"));
    }

    /**
     * Whether an event loop flushes its batch of durable appends itself when no flush is in progress (a lone request's
     * commit then costs no thread hand-off), rather than always leaving flushes to the background writer.
     */
    public boolean flushOnEventLoop() {
        return settings.bool("flush-on-event-loop");
    }

    public Path dataDir() {
        return Path.of(settings.get("data-dir"));
    }

    public InetSocketAddress httpAddress() {
        return parseAddress(settings.get("http"), "http");
    }

    public Durability durability() {
        return Durability.parse(settings.get("durability"));
    }

    /** How appends that name none store their payloads (none, lz4, zstd; docs/format.md, "Compressed payloads"). */
    public io.walden.core.Compression compression() {
        return io.walden.core.Compression.parse(settings.get("compression"));
    }

    public SyncMethod syncMethod() {
        try {
            return SyncMethod.parse(settings.get("sync-method"));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("sync-method: " + e.getMessage(), e);
        }
    }

    /** The bearer token the data API and mutating admin endpoints require, or null for none. */
    public String authToken() {
        return settings.nonBlank("auth-token");
    }

    /** PEM certificate chain for HTTPS, or null for plain HTTP. */
    public Path tlsCert() {
        return settings.path("tls-cert");
    }

    /** PEM private key (PKCS#8) for HTTPS, or null. */
    public Path tlsKey() {
        return settings.path("tls-key");
    }

    public long maxBatchBytes() {
        return settings.positive("max-batch-bytes");
    }

    public int maxReaders() {
        return settings.positiveInt("max-readers");
    }

    /** How long a stream may stay unable to write (its client stopped reading) before it is closed. */
    public long streamWriteTimeoutMillis() {
        return settings.positive("stream-write-timeout-ms");
    }

    /** The most replicas a primary serves and replication slots it keeps. */
    public int maxReplicas() {
        return settings.positiveInt("max-replicas");
    }

    /** The most records one batch may hold. */
    public int maxBatchRecords() {
        return settings.positiveInt("max-batch-records");
    }

    /** Open HTTP connections beyond which a new one is answered 503 and closed. */
    public int maxConnections() {
        return settings.positiveInt("max-connections");
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
        return LogConfigs.walConfigBuilder(this, settings);
    }

    /** The archive every sealed segment goes to (s3:// or file://), or null. */
    public String archiveTo() {
        return settings.get("archive-to");
    }

    /** A replica's archive, where it fetches what its primary no longer keeps (s3:// or file://), or null. */
    public String restoreFrom() {
        return settings.get("restore-from");
    }

    /** The endpoint of an S3-compatible store for archive-to and restore-from, or null (AWS). */
    public String archiveEndpoint() {
        return settings.get("archive-endpoint");
    }

    /** How soon the current segment's flushed records reach the archive; zero: only sealed segments. */
    public java.time.Duration archiveTimeout() {
        return settings.duration("archive-timeout");
    }

    /**
     * The archive's settings with its target opened (an S3 client), or null when archive-to is not set. The caller
     * hands it to the log, which closes the target.
     */
    public io.walden.core.archive.ArchiveConfig archiveConfig() {
        return LogConfigs.archiveConfig(this, settings);
    }

    /** Where a primary listens for replicas (default 127.0.0.1:7401). */
    public InetSocketAddress replicationListen() {
        String v = settings.get("replication-listen");
        return parseAddress(v == null ? DEFAULT_REPLICATION : v, "replication-listen");
    }

    /** Whether replication-listen was set: a replica serves replicas of its own (cascading) only then. */
    public boolean replicationListenSet() {
        return settings.get("replication-listen") != null;
    }

    /** The shared secret of replication (a primary requires it, a replica sends it), or null for none. */
    public String replicationSecret() {
        return settings.nonBlank("replication-secret");
    }

    /** This server's replication certificate chain (PEM): its identity as a primary, and as a replica under mutual TLS. */
    public Path replicationTlsCert() {
        return settings.path("replication-tls-cert");
    }

    public Path replicationTlsKey() {
        return settings.path("replication-tls-key");
    }

    /**
     * CA certificates (PEM) of the replication peers: a replica connects over TLS and checks its primary against
     * them; a primary requires each replica to present a certificate they signed (mutual TLS).
     */
    public Path replicationTlsCa() {
        return settings.path("replication-tls-ca");
    }

    /** The explicit, logged opt-out: accept replicas on a non-loopback address without TLS and authentication. */
    public boolean replicationInsecure() {
        return Boolean.parseBoolean(settings.get("replication-insecure").trim());
    }

    /** The primary to follow, or null for a primary. */
    public InetSocketAddress replicateFrom() {
        String v = settings.get("replicate-from");
        return v == null ? null : parseAddress(v, "replicate-from");
    }

    /** The replica group's coordinator ({@code zk://HOST:PORT[,...]/PATH}), or null for a server on its own. */
    public String coordinator() {
        return settings.get("coordinator");
    }

    /** The coordinator session's timeout: a primary's loss is noticed this long after it last reached ZooKeeper. */
    public int coordinatorSessionTimeoutMillis() {
        return (int) Long.parseLong(settings.get("coordinator-session-timeout-ms"));
    }

    /** The most log a replication slot may hold back before it is dropped. */
    public long maxSlotRetainedBytes() {
        return settings.positive("max-slot-retained-bytes");
    }

    /** This replica's name in the primary's synchronous policy. */
    public String name() {
        String n = settings.get("name");
        return n != null ? n : "walden-" + ProcessHandle.current().pid();
    }

    /** The synchronous policy ({@code FIRST n (a, b)} / {@code ANY n (a, b)}), or null for none. */
    public String syncReplicas() {
        return settings.nonBlank("sync-replicas");
    }

    /** True when the log directory already holds a log (a replica then keeps its own identity). */
    public boolean hasLog() {
        return io.walden.core.recovery.ControlFile.exists(dataDir());
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

    /** The settings with the auth token and replication secret hidden. */
    @Override
    public String toString() {
        return settings.toString();
    }
}
