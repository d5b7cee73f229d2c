package io.walden.server.config;

import io.walden.core.Compression;
import io.walden.core.Durability;
import io.walden.core.SyncMethod;
import io.walden.core.WalConfig;
import io.walden.core.archive.ArchiveConfig;
import io.walden.server.http.Transports;

import io.walden.server.logging.LogFormat;
import io.walden.server.logging.ServerLogging;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Every setting of {@code walden serve}, each declared once: its flag and YAML key, type, default and help. Adding a
 * setting is adding a line here (and reading it where it is used); {@code --help}, the YAML reader, the defaults and
 * the refusal of unknown keys follow. docs/operations.md lists the same settings.
 *
 * <p>Sizes take binary units ({@code 64MiB}), durations a unit ({@code 200ms}, {@code 60s}); see {@link Values}. A plain
 * number is milliseconds only for the durations that had an older {@code -ms} name ({@link #millisDuration}).
 */
public final class ServerSettings {
    // ------------------------------------------------------------------ the log
    public static final Setting<Path> DATA_DIR = of("data-dir", "DIR", Path::of, "walden-data", "Log directory.");
    public static final Setting<Durability> DURABILITY = of("durability", "LEVEL", Durability::parse, "on",
            "Default durability of an append that names none: off, local, remote_write, on or remote_apply.");
    public static final Setting<SyncMethod> SYNC_METHOD = of("sync-method", "METHOD", SyncMethod::parse, "fdatasync",
            "How the log forces its files: fdatasync, fsync, open_datasync or none (see walden test-fsync).");
    public static final Setting<Long> SEGMENT_SIZE = of("segment-size", "SIZE", Values::positiveSize, null,
            "Segment size of a new log: a power of two, e.g. 64MiB (default: 64MiB, or the existing log's size).");
    public static final Setting<Long> WAL_BUFFERS = of("wal-buffers", "SIZE", Values::positiveSize, null,
            "WAL buffers, the ring records are copied into before they are written into the files: a power of two "
                    + "(default: 32MiB, or the segment size if smaller).");
    public static final Setting<Compression> COMPRESSION = of("compression", "CODEC", Compression::parse, "none",
            "How appends that name none store their payloads: none, lz4 or zstd; a payload is stored compressed only "
                    + "when that saves space.");
    public static final Setting<Boolean> ZSTD_DICTIONARY = flag("zstd-dictionary", "true", "Whether small zstd payloads "
            + "are compressed with a dictionary the log trains on its first MiB of them and stores in every segment that "
            + "needs it.");
    public static final Setting<Integer> ZSTD_LEVEL = of("zstd-level", "LEVEL", ServerSettings::zstdLevel,
            Integer.toString(WalConfig.DEFAULT_ZSTD_LEVEL),
            "The zstd level of zstd payloads, from zstd's negative fast levels to 22; readers need no setting.");
    public static final Setting<Duration> WRITER_DELAY = millisDuration("writer-delay", "200ms",
            "Longest an off record waits for the background writer's force (PostgreSQL's wal_writer_delay).");
    public static final Setting<Duration> CHECKPOINT_INTERVAL = duration("checkpoint-interval", "1s",
            "How often the control file records the flushed position, when it moved (recovery scans from there).");
    public static final Setting<Long> MAX_CURSOR_RETAINED_BYTES = of("max-cursor-retained-bytes", "SIZE",
            Values::positiveSize, "4GiB", "Most log a consumer cursor may hold back from truncation; beyond it the "
                    + "cursor is lost.");
    public static final Setting<Duration> RETENTION_TIME = duration("retention-time", null,
            "Remove whole sealed segments, oldest first, once all their records are older than this, with a unit "
                    + "(7d, 12h, 90s; Kafka's retention.ms); never what a replication slot, a consumer cursor or the "
                    + "archiver still needs. Unset: keep everything.");
    public static final Setting<Long> RETENTION_BYTES = of("retention-bytes", "SIZE", Values::positiveSize, null,
            "Remove the oldest sealed segments while the log holds more than this (100GiB; Kafka's retention.bytes), "
                    + "with the same holders as --retention-time. Unset: keep everything.");

    public static final Setting<Long> MAX_RECORD_SIZE = of("max-record-size", "SIZE", Values::positiveSize, null,
            "Largest payload a record may hold (default: 16MiB, or what --segment-size and --wal-buffers allow if less; a "
                    + "named log's: what its 4MiB WAL buffers hold, about 4MiB).");

    // ------------------------------------------------------------------ named logs
    public static final Setting<Boolean> AUTO_CREATE_LOGS = flag("auto-create-logs", "false", "An append to a log that "
            + "does not exist creates it with the server's settings, as if POST /v1/logs had (false: 404 log_not_found).");
    public static final Setting<Long> WAL_BUFFERS_BUDGET = of("wal-buffers-budget", "SIZE", Values::positiveSize, "1GiB",
            "Most memory the named logs' WAL buffers take together: a log holds its own only while it appends (then "
                    + "idle for 5 s); beyond it, quiet logs give theirs back so that busy ones can append.");
    public static final Setting<Integer> MAX_LOGS = of("max-logs", "N", Values::positiveInt, "1000",
            "Most logs this server holds, the log 'default' included; a creation beyond it is refused (409 too_many_logs).");

    // ------------------------------------------------------------------ HTTP
    public static final Setting<InetSocketAddress> HTTP = of("http", "HOST:PORT", Values::address, "127.0.0.1:7400",
            "HTTP address of the data and admin APIs.");
    public static final Setting<String> AUTH_TOKEN = of("auth-token", "TOKEN", Values::text, null,
            "Bearer token of an admin over every log: with it (or --auth-tokens), every endpoint but the read-only ones "
                    + "needs a token; a token is required when --http is not a loopback address.").secretValue();
    public static final Setting<List<TokensFile.Entry>> AUTH_TOKENS = of("auth-tokens", "FILE", TokensFile::read, null,
            "YAML file of the tokens' SHA-256 hashes, each with a role (read, append or admin) and optionally the log "
                    + "patterns it may use (see walden hash-token); beside --auth-token; re-read within 3 s of a change.");
    public static final Setting<Path> TLS_CERT = of("tls-cert", "PEM", Path::of, null,
            "PEM certificate chain: serve HTTPS (with --tls-key).");
    public static final Setting<Path> TLS_KEY = of("tls-key", "PEM", Path::of, null, "PEM private key (PKCS#8) for --tls-cert.");
    public static final Setting<Transports.Kind> TRANSPORT = of("transport", "KIND", Transports.Kind::parse, "auto",
            "Network transport of the event loops: auto (epoll where it loads, else nio), epoll, io_uring or nio; "
                    + "/admin/status shows the one in use.");
    public static final Setting<Integer> EVENT_LOOPS = computed("event-loops", "N", Values::positiveInt,
            () -> Integer.toString(Runtime.getRuntime().availableProcessors()), "HTTP event loop threads: one per core "
                    + "unless set.");
    public static final Setting<Boolean> FLUSH_ON_EVENT_LOOP = flag("flush-on-event-loop", "true", "true: an event loop "
            + "flushes its batch of durable appends itself when no flush is in progress, so a lone request's commit costs "
            + "no thread hand-off; false: the background writer always flushes, and event loops never wait for the disk.");
    public static final Setting<Long> MAX_BATCH_BYTES = of("max-batch-bytes", "SIZE", Values::positiveSize, "64MiB",
            "Largest request body accepted (a batch of appends).");
    public static final Setting<Integer> MAX_BATCH_RECORDS = of("max-batch-records", "N", Values::positiveInt, "100000",
            "Most records in one batch; each record is also charged 64 bytes against --max-batch-bytes.");
    public static final Setting<Integer> MAX_READERS = of("max-readers", "N", Values::positiveInt, "32",
            "Concurrent reads and streams before 503.");
    public static final Setting<Integer> MAX_CONNECTIONS = of("max-connections", "N", Values::positiveInt, "1024",
            "Open HTTP connections before a new one gets 503.");
    public static final Setting<Duration> STREAM_WRITE_TIMEOUT = millisDuration("stream-write-timeout", "30s",
            "Close a stream whose client takes nothing for this long.");

    // ------------------------------------------------------------------ replication
    public static final Setting<ReplicationListen> REPLICATION_LISTEN = of("replication-listen", "HOST:PORT",
            ReplicationListen::parse, null, "Where a primary accepts replicas (default: 127.0.0.1:7401), or none; on a "
                    + "replica, set it to serve cascading replicas. Without authentication any local process can stream "
                    + "the log: with --auth-token, --replication-secret or --replication-tls-ca is required. A non-loopback "
                    + "address needs --replication-tls-cert/-key and --replication-secret or --replication-tls-ca, or "
                    + "--replication-insecure.");
    public static final Setting<InetSocketAddress> REPLICATE_FROM = of("replicate-from", "HOST:PORT", Values::address, null,
            "Run as a replica of the primary there.");
    public static final Setting<String> NAME = of("name", "NAME", Values::text, null,
            "This server's name: in its primary's synchronous policy, and in a replica group (default: walden-<pid>).");
    public static final Setting<String> SYNC_REPLICAS = of("sync-replicas", "POLICY", Values::text, null,
            "Synchronous policy of a primary: 'FIRST n (a, b)' or 'ANY n (a, b)'; on a replica, the policy it applies "
                    + "once promoted.");
    public static final Setting<Duration> REMOTE_COMMIT_TIMEOUT = millisDuration("remote-commit-timeout", "0",
            "How long a remote-level commit waits for the replicas, from its append (0: forever).");
    public static final Setting<Boolean> SHIP_FLUSHED_ONLY = flag("ship-flushed-only", "false", "A primary ships only "
            + "records it has flushed (PostgreSQL's rule; a synchronous commit then pays both forces in a row); by default "
            + "records leave once written, and the replicas' forces overlap this one's.");
    public static final Setting<Integer> MAX_REPLICAS = of("max-replicas", "N", Values::positiveInt, "16",
            "Most replicas served and replication slots kept by a primary.");
    public static final Setting<Long> MAX_SLOT_RETAINED_BYTES = of("max-slot-retained-bytes", "SIZE", Values::positiveSize,
            "4GiB", "Most log a replica's slot may hold back.");
    public static final Setting<String> REPLICATION_SECRET = of("replication-secret", "SECRET", Values::text, null,
            "Shared secret: a primary requires it of every replica; a replica sends it.").secretValue();
    public static final Setting<Path> REPLICATION_TLS_CERT = of("replication-tls-cert", "PEM", Path::of, null,
            "PEM certificate chain for replication: a primary serves TLS with it; a replica presents it when its primary "
                    + "requires mutual TLS.");
    public static final Setting<Path> REPLICATION_TLS_KEY = of("replication-tls-key", "PEM", Path::of, null,
            "PEM private key (PKCS#8) for --replication-tls-cert.");
    public static final Setting<Path> REPLICATION_TLS_CA = of("replication-tls-ca", "PEM", Path::of, null,
            "PEM CA certificates of the replication peers: a replica connects over TLS and checks its primary against "
                    + "them; a primary requires replicas' certificates signed by them.");
    public static final Setting<Boolean> REPLICATION_INSECURE = flag("replication-insecure", "false", "Accept replicas "
            + "without TLS or authentication where the rules above would refuse (logged as a warning).");

    // ------------------------------------------------------------------ archive
    public static final Setting<String> ARCHIVE_TO = of("archive-to", "URI", Values::archiveUri, null,
            "Archive every sealed segment to s3://bucket[/prefix] or file:///dir before it may be removed (credentials "
                    + "and region from the AWS SDK's default chains); a replica archives only once promoted.");
    public static final Setting<String> ARCHIVE_ENDPOINT = of("archive-endpoint", "URL", Values::text, null,
            "Endpoint of an S3-compatible store, http://host:port; requests are then path-style.");
    public static final Setting<Duration> ARCHIVE_TIMEOUT = duration("archive-timeout", "60s",
            "The current segment's records reach the archive at most this long after they were flushed (0: only sealed "
                    + "segments).");
    public static final Setting<Long> ARCHIVE_MAX_PENDING_BYTES = of("archive-max-pending-bytes", "SIZE",
            Values::positiveSize, "4GiB", "Flushed bytes not yet archived beyond which --archive-when-full applies (at "
                    + "least two segments).");
    public static final Setting<ArchiveConfig.WhenFull> ARCHIVE_WHEN_FULL = of("archive-when-full", "POLICY",
            ArchiveConfig.WhenFull::parse, "block", "block: refuse appends (503 appends_blocked) until the archive "
                    + "catches up; drop-archive: give up the oldest unarchived segments, leaving a gap in the archive.");
    public static final Setting<String> RESTORE_FROM = of("restore-from", "URI", Values::archiveUri, null,
            "A replica's archive, s3://bucket[/prefix] or file:///dir: when its primary no longer keeps what it needs, "
                    + "it fetches that from here, then streams.");

    // ------------------------------------------------------------------ replica groups
    public static final Setting<String> COORDINATOR = of("coordinator", "URI", Values::text, null,
            "Run as a member of the replica group kept in ZooKeeper at zk://HOST:PORT[,HOST:PORT...]/PATH: elected primary "
                    + "or following it, with automatic failover and fencing (needs --name and --replication-listen; see "
                    + "docs/operations.md).");
    public static final Setting<Duration> COORDINATOR_SESSION_TIMEOUT = millisDuration(
            "coordinator-session-timeout", "6s", "ZooKeeper session timeout asked for: a lost primary is replaced after "
                    + "about this long. ZooKeeper may grant another (2 to 20 ticks): a warning at start says so, and "
                    + "/admin/status shows the one in force.");

    // ------------------------------------------------------------------ a cluster
    public static final Setting<String> CLUSTER = of("cluster", "URI", Values::text, null,
            "Join the cluster kept in ZooKeeper at zk://HOST:PORT[,HOST:PORT...]/PATH (the last element of PATH names it; "
                    + "created on first use): Apache Helix places each named log's primary and replicas over the servers, "
                    + "and a request for a log led elsewhere is redirected there (needs --name and --replication-listen; "
                    + "see docs/cluster.md). The session timeout is coordinator-session-timeout's.");

    // ------------------------------------------------------------------ logging
    public static final Setting<String> LOG_LEVEL = of("log-level", "LEVEL", ServerLogging::parseLevel, "info",
            "Level of Walden's log lines (trace, debug, info, warn, error), on standard error; libraries log at warn "
                    + "and above.");
    public static final Setting<LogFormat> LOG_FORMAT = of("log-format", "FORMAT", LogFormat::parse, "text",
            "text, or json: one object per line with time, level, logger, thread, message, log and member (for a log "
                    + "shipper).");

    /** Every setting, in the order --help lists them. */
    public static final List<Setting<?>> ALL = List.of(DATA_DIR, DURABILITY, SYNC_METHOD, SEGMENT_SIZE, WAL_BUFFERS,
            COMPRESSION, ZSTD_DICTIONARY, ZSTD_LEVEL, WRITER_DELAY, CHECKPOINT_INTERVAL, MAX_CURSOR_RETAINED_BYTES,
            RETENTION_TIME, RETENTION_BYTES, MAX_RECORD_SIZE, AUTO_CREATE_LOGS, WAL_BUFFERS_BUDGET, MAX_LOGS, HTTP, AUTH_TOKEN, AUTH_TOKENS, TLS_CERT, TLS_KEY, TRANSPORT, EVENT_LOOPS, FLUSH_ON_EVENT_LOOP, MAX_BATCH_BYTES,
            MAX_BATCH_RECORDS, MAX_READERS, MAX_CONNECTIONS, STREAM_WRITE_TIMEOUT,
            REPLICATION_LISTEN, REPLICATE_FROM, NAME, SYNC_REPLICAS, REMOTE_COMMIT_TIMEOUT, SHIP_FLUSHED_ONLY, MAX_REPLICAS,
            MAX_SLOT_RETAINED_BYTES, REPLICATION_SECRET, REPLICATION_TLS_CERT, REPLICATION_TLS_KEY, REPLICATION_TLS_CA,
            REPLICATION_INSECURE,
            ARCHIVE_TO, ARCHIVE_ENDPOINT, ARCHIVE_TIMEOUT, ARCHIVE_MAX_PENDING_BYTES, ARCHIVE_WHEN_FULL, RESTORE_FROM,
            COORDINATOR, COORDINATOR_SESSION_TIMEOUT, CLUSTER, LOG_LEVEL, LOG_FORMAT);

    private ServerSettings() {
    }

    /** The setting {@code name} names (its key or an alias), or null. */
    public static Setting<?> named(String name) {
        for (Setting<?> s : ALL) {
            if (s.named(name)) {
                return s;
            }
        }
        return null;
    }

    private static <T> Setting<T> of(String key, String label, Function<String, T> parse, String defaultText, String help) {
        return new Setting<>(key, label, parse, defaultText == null ? null : () -> defaultText, help, List.of(), false,
                false, false);
    }

    private static <T> Setting<T> computed(String key, String label, Function<String, T> parse, Supplier<String> defaultText,
                                           String help) {
        return new Setting<>(key, label, parse, defaultText, help, List.of(), false, false, true);
    }

    private static Setting<Boolean> flag(String key, String defaultText, String help) {
        return new Setting<>(key, "BOOL", Values::bool, () -> defaultText, help, List.of(), false, true, false);
    }

    /** A duration with a unit ({@code 7d}, {@code 200ms}): a plain number but 0 is refused, as its unit is a guess. */
    private static Setting<Duration> duration(String key, String defaultText, String help) {
        return of(key, "DURATION", text -> Values.duration(text, null), defaultText, help);
    }

    /**
     * A duration whose older name was {@code key-ms}, still accepted: a plain number keeps meaning milliseconds, under
     * either name, as configurations written for the older name expect.
     */
    private static Setting<Duration> millisDuration(String key, String defaultText, String help) {
        return of(key, "DURATION", text -> Values.duration(text, ChronoUnit.MILLIS), defaultText, help).alias(key + "-ms");
    }

    private static int zstdLevel(String text) {
        try {
            return Integer.parseInt(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("a zstd level (1 to 22, or negative for faster), not '" + text + "'");
        }
    }
}
