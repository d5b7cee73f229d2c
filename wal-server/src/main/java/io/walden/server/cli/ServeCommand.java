package io.walden.server.cli;

import io.walden.server.WaldenServer;
import io.walden.server.config.ServerConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** Runs the sidecar until SIGTERM/SIGINT, then shuts down cleanly (nothing acknowledged is lost). */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = {"Run a Walden log behind an HTTP data API and admin API (docs/http-api.md).",
                "Settings come from defaults, then --config, then flags. Stops cleanly on SIGTERM.",
                "",
                "Open by default: HTTP on 127.0.0.1:7400 without a token (any local process may append and read),",
                "and replication on 127.0.0.1:7401 without a secret (any local process may stream the whole log).",
                "--auth-token closes the first; with it, --replication-secret (or mutual TLS) is required for the second.",
                "Off loopback, HTTP needs --auth-token, and replication needs TLS and authentication.",
                ""})
final class ServeCommand implements Callable<Integer> {

    @Option(names = "--config", description = "YAML file with any of the settings below (flags win over it).")
    Path configFile;

    @Option(names = "--data-dir", description = "Log directory (default: " + ServerConfig.DEFAULT_DATA_DIR + ").")
    String dataDir;

    @Option(names = "--http", paramLabel = "HOST:PORT", description = "HTTP address (default: " + ServerConfig.DEFAULT_HTTP + ").")
    String http;

    @Option(names = "--durability", description = "Default durability: off, local, remote_write, on, remote_apply (default: on).")
    String durability;

    @Option(names = "--compression", description = "How appends that name none store their payloads: none, lz4 or zstd "
            + "(default: none); a payload is stored compressed only when that saves space.")
    String compression;

    @Option(names = "--zstd-dictionary", arity = "0..1", fallbackValue = "true", description = "Whether small zstd "
            + "payloads are compressed with a dictionary the log trains on its first MiB of them and stores in every segment "
            + "that needs it (default: true).")
    String zstdDictionary;

    @Option(names = "--zstd-level", description = "The zstd level of zstd payloads, from zstd's negative fast levels to 22 "
            + "(default: 1); readers need no setting.")
    String zstdLevel;

    @Option(names = "--max-cursor-retained-bytes", description = "Most log a consumer cursor may hold back from "
            + "truncation; beyond it the cursor is lost (default: 4294967296).")
    String maxCursorRetainedBytes;

    @Option(names = "--archive-to", paramLabel = "URI", description = "Archive every sealed segment to s3://bucket[/prefix] "
            + "or file:///dir before it may be removed (credentials and region from the AWS SDK's default chains). "
            + "A replica archives only once promoted.")
    String archiveTo;

    @Option(names = "--archive-endpoint", paramLabel = "URL", description = "Endpoint of an S3-compatible store "
            + "(http://host:port); requests are then path-style.")
    String archiveEndpoint;

    @Option(names = "--archive-timeout", paramLabel = "DURATION", description = "The current segment's records reach the "
            + "archive at most this long after they were flushed: 60s, 500ms, 5m, or seconds (default: 60s; 0: only sealed segments).")
    String archiveTimeout;

    @Option(names = "--archive-max-pending-bytes", description = "Flushed bytes not yet archived beyond which "
            + "--archive-when-full applies (default: 4294967296; at least two segments).")
    String archiveMaxPendingBytes;

    @Option(names = "--archive-when-full", description = "block: refuse appends (503 appends_blocked) until the archive "
            + "catches up; drop-archive: give up the oldest unarchived segments, leaving a gap in the archive (default: block).")
    String archiveWhenFull;

    @Option(names = "--restore-from", paramLabel = "URI", description = "A replica's archive (s3://bucket[/prefix] or "
            + "file:///dir): when its primary no longer keeps what it needs, it fetches that from here, then streams.")
    String restoreFrom;

    @Option(names = "--sync-method", description = "fdatasync, fsync, open_datasync or none (default: fdatasync).")
    String syncMethod;

    @Option(names = "--segment-size", description = "Segment size in bytes for a new log (default: 67108864).")
    String segmentSize;

    @Option(names = "--wal-buffers", description = "Bytes of WAL buffers, the ring records are copied into before they are "
            + "written into the files: a power of two (default: 33554432, or the segment size if smaller).")
    String walBuffers;

    @Option(names = "--transport", description = "Network transport of the event loops: auto (epoll where it loads, "
            + "else nio), epoll, io_uring or nio (default: auto). /admin/status shows the one in use.")
    String transport;

    @Option(names = "--flush-on-event-loop", arity = "0..1", fallbackValue = "true",
            description = "true (default): an event loop flushes its batch of durable appends itself when no flush is in "
                    + "progress, so a lone request's commit costs no thread hand-off (the loop waits for that one force); "
                    + "false: the background writer always flushes, and event loops never wait for the disk.")
    String flushOnEventLoop;

    @Option(names = "--event-loops", description = "HTTP event loop threads (default: one per core).")
    String eventLoops;

    @Option(names = "--writer-delay-ms", description = "Longest an OFF record waits for the background writer's force "
            + "(PostgreSQL's wal_writer_delay; default 200).")
    String writerDelayMs;

    @Option(names = "--ship-flushed-only", arity = "0..1", fallbackValue = "true",
            description = "A primary ships only records it has flushed (PostgreSQL's rule; a synchronous commit then pays "
                    + "both forces in a row). Default false: records leave once written, and the replicas' forces overlap "
                    + "this one's.")
    String shipFlushedOnly;

    @Option(names = "--auth-token", description = "Bearer token required by the data API and mutating admin calls; "
            + "required when --http is not a loopback address.")
    String authToken;

    @Option(names = "--replication-listen", paramLabel = "HOST:PORT",
            description = "Where a primary accepts replicas (default: " + ServerConfig.DEFAULT_REPLICATION + "); on a replica, "
                    + "set it to serve cascading replicas. Without authentication any local process can stream the log: "
                    + "with --auth-token, --replication-secret or --replication-tls-ca is required. A non-loopback address "
                    + "needs --replication-tls-cert/-key and --replication-secret or --replication-tls-ca, or --replication-insecure.")
    String replicationListen;

    @Option(names = "--replication-secret", description = "Shared secret: a primary requires it of every replica; a replica sends it.")
    String replicationSecret;

    @Option(names = "--replication-tls-cert", description = "PEM certificate chain for replication: a primary serves TLS with it; "
            + "a replica presents it when its primary requires mutual TLS.")
    String replicationTlsCert;

    @Option(names = "--replication-tls-key", description = "PEM private key (PKCS#8) for --replication-tls-cert.")
    String replicationTlsKey;

    @Option(names = "--replication-tls-ca", description = "PEM CA certificates of the replication peers: a replica connects "
            + "over TLS and checks its primary against them; a primary requires replicas' certificates signed by them.")
    String replicationTlsCa;

    @Option(names = "--replication-insecure", arity = "0..1", fallbackValue = "true",
            description = "Accept replicas without TLS or authentication where the rules above would refuse (logged as a warning).")
    String replicationInsecure;

    @Option(names = "--replicate-from", paramLabel = "HOST:PORT", description = "Run as a replica of the primary there.")
    String replicateFrom;

    @Option(names = "--name", description = "This replica's name in the primary's synchronous policy.")
    String name;

    @Option(names = "--sync-replicas", description = "Synchronous policy of a primary: 'FIRST n (a, b)' or 'ANY n (a, b)'; "
            + "on a replica, the policy it applies once promoted.")
    String syncReplicas;

    @Option(names = "--remote-commit-timeout-ms", description = "How long a remote-level commit waits for the replicas (0: forever).")
    String remoteCommitTimeout;

    @Option(names = "--max-replicas", description = "Most replicas served and replication slots kept by a primary (default: 16).")
    String maxReplicas;

    @Option(names = "--max-slot-retained-bytes", description = "Most log a replica's slot may hold back (default: 4 GiB).")
    String maxSlotRetainedBytes;

    @Option(names = "--tls-cert", description = "PEM certificate chain: serve HTTPS (with --tls-key).")
    String tlsCert;

    @Option(names = "--tls-key", description = "PEM private key (PKCS#8) for --tls-cert.")
    String tlsKey;

    @Option(names = "--max-batch-bytes", description = "Largest request body accepted (default: 67108864).")
    String maxBatchBytes;

    @Option(names = "--max-batch-records", description = "Most records in one batch (default: 100000); each record is "
            + "also charged 64 bytes against --max-batch-bytes.")
    String maxBatchRecords;

    @Option(names = "--stream-write-timeout-ms", description = "Close a stream whose client takes nothing for this long "
            + "(default: 30000).")
    String streamWriteTimeout;

    @Option(names = "--max-readers", description = "Concurrent reads and streams before 503 (default: 32).")
    String maxReaders;

    @Option(names = "--coordinator", paramLabel = "zk://HOST:PORT[,HOST:PORT...]/PATH", description = "Run as a member "
            + "of the replica group kept in ZooKeeper there: elected primary or following it, with automatic failover "
            + "and fencing (needs --name and --replication-listen; see docs/operations.md).")
    String coordinator;

    @Option(names = "--coordinator-session-timeout-ms", description = "ZooKeeper session timeout asked for: a lost "
            + "primary is replaced after about this long (default: 6000). ZooKeeper may grant another (2 to 20 ticks): "
            + "a warning at start says so, and /admin/status shows the one in force.")
    String coordinatorSessionTimeout;

    @Option(names = "--max-connections", description = "Open HTTP connections before a new one gets 503 (default: 1024).")
    String maxConnections;

    @Override
    public Integer call() throws Exception {
        Map<String, String> flags = new LinkedHashMap<>();
        flags.put("data-dir", dataDir);
        flags.put("http", http);
        flags.put("durability", durability);
        flags.put("compression", compression);
        flags.put("zstd-dictionary", zstdDictionary);
        flags.put("zstd-level", zstdLevel);
        flags.put("max-cursor-retained-bytes", maxCursorRetainedBytes);
        flags.put("sync-method", syncMethod);
        flags.put("archive-to", archiveTo);
        flags.put("archive-endpoint", archiveEndpoint);
        flags.put("archive-timeout", archiveTimeout);
        flags.put("archive-max-pending-bytes", archiveMaxPendingBytes);
        flags.put("archive-when-full", archiveWhenFull);
        flags.put("restore-from", restoreFrom);
        flags.put("segment-size", segmentSize);
        flags.put("wal-buffers", walBuffers);
        flags.put("transport", transport);
        flags.put("flush-on-event-loop", flushOnEventLoop);
        flags.put("event-loops", eventLoops);
        flags.put("ship-flushed-only", shipFlushedOnly);
        flags.put("writer-delay-ms", writerDelayMs);
        flags.put("auth-token", authToken);
        flags.put("max-batch-bytes", maxBatchBytes);
        flags.put("max-readers", maxReaders);
        flags.put("stream-write-timeout-ms", streamWriteTimeout);
        flags.put("max-batch-records", maxBatchRecords);
        flags.put("max-connections", maxConnections);
        flags.put("coordinator", coordinator);
        flags.put("coordinator-session-timeout-ms", coordinatorSessionTimeout);
        flags.put("tls-cert", tlsCert);
        flags.put("replication-listen", replicationListen);
        flags.put("replicate-from", replicateFrom);
        flags.put("name", name);
        flags.put("sync-replicas", syncReplicas);
        flags.put("remote-commit-timeout-ms", remoteCommitTimeout);
        flags.put("max-slot-retained-bytes", maxSlotRetainedBytes);
        flags.put("max-replicas", maxReplicas);
        flags.put("tls-key", tlsKey);
        flags.put("replication-secret", replicationSecret);
        flags.put("replication-tls-cert", replicationTlsCert);
        flags.put("replication-tls-key", replicationTlsKey);
        flags.put("replication-tls-ca", replicationTlsCa);
        flags.put("replication-insecure", replicationInsecure);
        ServerConfig config;
        try {
            config = ServerConfig.load(configFile, flags);
        } catch (IllegalArgumentException e) {
            System.err.println("walden serve: " + e.getMessage());
            return 2;
        }
        WaldenServer server = new WaldenServer(config);
        try {
            server.start();
        } catch (IllegalStateException | io.walden.core.WalException e) {
            System.err.println("walden serve: " + e.getMessage());
            server.close();
            return 2;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "walden-shutdown"));
        System.out.println("walden: serving on " + (config.tlsCert() != null ? "https" : "http") + "://" + server.boundAddress().getAddress().getHostAddress() + ":"
                + server.boundAddress().getPort() + " (data " + config.dataDir().toAbsolutePath() + ")");
        System.out.flush();
        stopped.await();
        return 0;
    }
}
