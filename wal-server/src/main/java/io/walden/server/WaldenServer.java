package io.walden.server;

import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.DiskSpaceMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.netty4.NettyAllocatorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.walden.core.IllegalSettingException;
import io.walden.core.Lsn;
import io.walden.core.RetentionStatus;
import io.walden.core.Wal;
import io.walden.core.archive.ArchiveConfig;
import io.walden.core.internal.thread.WaldenThreads;
import io.walden.replication.replica.PrimaryIdentity;
import io.walden.replication.transport.EventLoops;
import io.walden.server.admin.AdminApi;
import io.walden.server.admin.AppendRates;
import io.walden.server.admin.Listening;
import io.walden.server.config.LogArchives;
import io.walden.server.config.ServerConfig;
import io.walden.server.config.TokensFile;
import io.walden.server.config.TokensFileWatch;
import io.walden.server.group.FailoverController;
import io.walden.server.http.Access;
import io.walden.server.http.CursorApi;
import io.walden.server.http.DataApi;
import io.walden.server.http.HeldRecordsApi;
import io.walden.server.http.HttpPipeline;
import io.walden.server.http.HttpRouter;
import io.walden.server.http.ClusterApi;
import io.walden.server.http.LogsApi;
import io.walden.server.http.NotServingYet;
import io.walden.server.http.Routes;
import io.walden.server.http.ServedLogs;
import io.walden.server.http.Transports;
import io.walden.server.logging.Units;
import io.walden.server.logs.LogCatalog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;

import static io.walden.server.config.ServerSettings.CLUSTER;
import static io.walden.server.config.ServerSettings.COORDINATOR;
import static io.walden.server.config.ServerSettings.DURABILITY;
import static io.walden.server.config.ServerSettings.EVENT_LOOPS;
import static io.walden.server.config.ServerSettings.FLUSH_ON_EVENT_LOOP;
import static io.walden.server.config.ServerSettings.HTTP;
import static io.walden.server.config.ServerSettings.MAX_BATCH_BYTES;
import static io.walden.server.config.ServerSettings.MAX_BATCH_RECORDS;
import static io.walden.server.config.ServerSettings.MAX_CONNECTIONS;
import static io.walden.server.config.ServerSettings.MAX_READERS;
import static io.walden.server.config.ServerSettings.REPLICATE_FROM;
import static io.walden.server.config.ServerSettings.STREAM_WRITE_TIMEOUT;
import static io.walden.server.config.ServerSettings.SYNC_METHOD;
import static io.walden.server.config.ServerSettings.TLS_CERT;
import static io.walden.server.config.ServerSettings.TLS_KEY;
import static io.walden.server.config.ServerSettings.TRANSPORT;

/**
 * The sidecar: one log, served over HTTP (data API and admin API on one port). Start with {@link #start},
 * stop with {@link #close}: stop accepting, let in-flight requests finish (up to 10 s; a commit waiting for the
 * synchronous replicas up to 1 s), close the log (which flushes), release the threads.
 *
 * <p>Threads: Netty event loops run appends and admin calls, and never wait: an append that needs a segment not
 * prepared yet moves to {@code walden-segment-wait}; a bounded pool ({@code walden-reader-*}) runs reads, which may
 * long-poll. Replication (the endpoint, the receiver, a --replicate-from replica's identity probe) runs on event
 * loops of its own (NIO), as the failover tests were measured with: not the HTTP workers, which may wait for a force
 * (flush-on-event-loop), where a replica's acknowledgement would wait behind it.
 */
public final class WaldenServer implements AutoCloseable {
    /** How long a stop lets the requests in flight finish (docs/operations.md). */
    private static final long STOP_DRAIN_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** How long of that a commit waiting for the synchronous replicas is given before it is ended ({@link #endRemoteWaits}). */
    private static final long REMOTE_WAIT_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final Logger LOG = LoggerFactory.getLogger(WaldenServer.class);
    /** Every request's answer while a cluster's server joins (docs/cluster.md, "A server that restarts"). */
    private static final NotServingYet JOINING = new NotServingYet("joining", "this server is joining its cluster "
            + "(docs/cluster.md): retry in a second, or ask another of its servers");

    private final ServerConfig config;
    private Wal wal;
    /** The archive's settings (its target is opened here and closed after the log); null without archive-to. */
    private ArchiveConfig archive;
    private EventLoopGroup boss;
    private EventLoopGroup workers;
    private ThreadPoolExecutor readers;
    private ExecutorService admin;
    /** Appends that must wait for the next segment at a roll: never on an event loop. */
    private ExecutorService segmentWaits;
    private ReplicationRole replication;
    /** This server's part in a replica group (coordinator), or null for a server on its own. */
    private FailoverController group;
    /** This server's part in a cluster ({@code --cluster}), or null. */
    private ClusterNode cluster;
    /** The HTTP listener: bound first, reading (accepting) only once the server is started. */
    private Channel serverChannel;
    /**
     * Set once {@link #startOrFail} turned accepting on; {@link #close} then drains before it stops. Written by the
     * starting thread and by close(), read by close() (on a shutdown hook's thread, say).
     */
    private volatile boolean started;
    private DataApi data;
    /** The logs by name: {@code default} ({@link #wal}) and the named logs of the store in the data directory. */
    private LogCatalog logs;
    private ServedLogs served;
    /** Each connection's handlers: answers 503 {@link #JOINING} until given the router. */
    private HttpPipeline pipeline;
    private HttpRouter router;
    /** The tokens and the count of their refusals, set with the router, before accepting (every connection's gate). */
    private Access access;
    /** Re-reads the tokens file on a change (null without one); stopped by {@link #close}. */
    private TokensFileWatch tokensFile;
    private Transports transport;
    private volatile boolean accepting;
    /** The HTTP listener's URL, for /admin/status: written at start, read by the event loops. */
    private volatile String httpUrl;

    public WaldenServer(ServerConfig config) {
        this.config = config;
    }

    /**
     * Binds the HTTP port, opens the log (running recovery), then accepts. A start that fails releases all it took
     * and leaves the log as a {@link Wal#close()} leaves it (what was refused before the log was opened, a bad
     * setting or a port another process holds, leaves it untouched): a failed start is never a crash, which the next
     * start would answer with a new epoch.
     *
     * @throws IllegalStateException when the HTTP address is not loopback and no auth token is configured, the TLS
     *                               files cannot be used, or an address cannot be listened on
     * @throws io.walden.core.WalException when the log cannot be opened (locked, corrupt, I/O)
     */
    public WaldenServer start() throws InterruptedException {
        try {
            return startOrFail();
        } catch (IllegalSettingException e) { // a setting only the log with its archive checks: in the user's names
            close();
            throw config.inServerTerms(e);
        } catch (Throwable e) { // anything, even a checked exception rethrown unchecked: the log is closed cleanly
            close();
            throw e;
        }
    }

    private WaldenServer startOrFail() throws InterruptedException {
        if (!config.loopbackOnly() && !config.tokenRequired()) {
            throw new IllegalStateException("refusing to listen on " + config.httpAddress() + " without an auth token: "
                    + "set --auth-token or --auth-tokens (or auth-token, auth-tokens in the config file), or bind 127.0.0.1");
        }
        SslContext tls;
        try {
            tls = config.get(TLS_CERT) == null ? null
                    : SslContextBuilder.forServer(config.get(TLS_CERT).toFile(), config.get(TLS_KEY).toFile()).build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalStateException("cannot use the TLS certificate/key (" + config.get(TLS_CERT) + ", "
                    + config.get(TLS_KEY) + "): " + e.getMessage(), e);
        }
        ReplicationRole.checkSafety(config);
        transport = Transports.choose(config.get(TRANSPORT));
        boss = transport.group(1);
        workers = transport.group(config.get(EVENT_LOOPS));
        // One group of event loops per process: replication's server, client and identity probe run on the HTTP
        // workers (shared: they never shut it down; shutDownEventLoops does, after replication has closed). Nothing
        // replication runs on a loop waits: the sender and the replica's write stage have threads of their own.
        EventLoops replicationLoops = transport.eventLoops(workers);
        serverChannel = bindHttp(tls); // before the log: a port another process holds must not touch it
        if (config.get(COORDINATOR) != null) {
            group = FailoverController.join(config);
            archive = config.archiveConfig();
            try {
                wal = group.openLog(config.walConfigBuilder().archive(archive));
            } catch (RuntimeException | InterruptedException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException("cannot open this member's log: " + e.getMessage(), e);
            }
        } else if (config.get(REPLICATE_FROM) != null && !config.hasLog()) {
            // A new replica: its log must be a copy of the primary's (same id, same segment size).
            PrimaryIdentity id = ReplicationRole.fetchIdentity(config, config.get(REPLICATE_FROM),
                    replicationLoops);
            archive = config.archiveConfig();
            wal = id.openReplicaLog(config.walConfigBuilder().archive(archive));
        } else {
            archive = config.archiveConfig();
            wal = Wal.open(config.walConfigBuilder().archive(LogArchives.defaultLog(config, archive)).build());
        }
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new JvmMemoryMetrics().bindTo(registry);
        new JvmGcMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        BuildInfo.bindTo(registry);
        // disk_free_bytes / disk_total_bytes of the data directory's file system: the disk-nearly-full alert (ops/)
        new DiskSpaceMetrics(config.dataDir().toAbsolutePath().toFile()).bindTo(registry);
        new NettyAllocatorMetrics(PooledByteBufAllocator.DEFAULT).bindTo(registry);
        logs = LogCatalog.open(config, wal, archive, registry); // binds every log's meters, default's included
        if (group != null) {
            replication = ReplicationRole.standby(wal, logs, config, registry, replicationLoops);
            group.start(wal, logs, replication, registry);
        } else {
            replication = ReplicationRole.start(wal, logs, config, registry, replicationLoops);
        }

        // No queue: the read beyond max-readers is refused at once (503), never parked behind long polls and streams.
        readers = new ThreadPoolExecutor(config.get(MAX_READERS), config.get(MAX_READERS), 60, TimeUnit.SECONDS,
                new SynchronousQueue<>(), WaldenThreads.numbered("walden-reader"));
        segmentWaits = Executors.newSingleThreadExecutor(WaldenThreads.named("walden-segment-wait"));
        data = new DataApi(wal, readers, config.get(MAX_BATCH_BYTES), config.get(MAX_BATCH_RECORDS), config.get(STREAM_WRITE_TIMEOUT).toMillis(),
                segmentWaits, config.get(FLUSH_ON_EVENT_LOOP), transport.hasFineTimers(), registry);
        admin = Executors.newSingleThreadExecutor(WaldenThreads.named("walden-admin"));
        httpUrl = (tls == null ? "http" : "https") + "://" + format(boundAddress());
        AppendRates rates = new AppendRates(registry);
        rates.scheduleOn(workers.next(), admin);
        CursorApi cursors = new CursorApi(wal, readers);
        served = new ServedLogs(logs, data, cursors, readers, admin);
        access = Access.of(TokensFile.of(config), registry);
        tokensFile = TokensFileWatch.start(config, access::replace, registry);
        LogsApi logsApi = new LogsApi(logs, rates, admin);
        ClusterApi clusterApi = new ClusterApi(admin);
        AdminApi adminApi = new AdminApi(wal, registry, () -> accepting, admin, replication, group,
                new Listening(transport.name(), () -> httpUrl, config.tokenRequired()), logs, rates);
        if (config.get(CLUSTER) != null) { // before serving: a request must find where its log is
            serverChannel.config().setAutoRead(true); // meanwhile each request is answered 503 joining, at once
            try {
                cluster = ClusterNode.join(config, wal, logs, replication, tls == null ? "http" : "https",
                        format(boundAddress()), replicationLoops, registry);
            } catch (RuntimeException | InterruptedException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException("cannot join the cluster " + config.get(CLUSTER) + ": " + e.getMessage(), e);
            }
            served.locateWith(cluster);
            logsApi.inCluster(cluster);
            clusterApi.inCluster(cluster);
            adminApi.inCluster(cluster);
        }
        router = new HttpRouter(Routes.of(data, cursors, logsApi, served, adminApi,
                new HeldRecordsApi(group == null ? null : group::heldLog, admin), clusterApi), wal.directory(), access);
        pipeline.serve(router, access);
        serverChannel.config().setAutoRead(true); // accept (or go on accepting, in a cluster) with the API
        started = true;
        accepting = true;
        LOG.info("Walden serving {} on {} (durability {}, sync {}, transport {}: {}); log at {}", wal.directory(),
                httpUrl, config.get(DURABILITY).configName(), config.get(SYNC_METHOD).configName(),
                transport.name(), transport.note(), Lsn.format(wal.insertLsn()));
        LOG.info("Retention: {}", describe(wal.status().retention()));
        return this;
    }

    /**
     * Binds the HTTP address, not yet accepting: connections wait in the listen backlog until {@link #startOrFail}
     * turns reading on, once the pipeline serves the router (or, in a cluster, while it joins: each request is then
     * answered 503 {@link #JOINING}). Bound before the log is opened, so that an address another process holds fails
     * the start before the log is touched.
     */
    private Channel bindHttp(SslContext tls) throws InterruptedException {
        int maxContent = (int) Math.min(Integer.MAX_VALUE - 1024, config.get(MAX_BATCH_BYTES));
        pipeline = new HttpPipeline(tls, config.get(MAX_CONNECTIONS), maxContent, JOINING);
        ServerBootstrap b = new ServerBootstrap()
                .group(boss, workers)
                .channel(transport.serverChannel())
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                // A client that half-closes (sends its requests, then shuts its side) still gets every answer and a
                // stream's last chunk: HttpConnection closes once it has answered (RFC 9112 9.6).
                .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
        // A client that vanished without a FIN (a dead machine, a dropped route) is found by TCP keepalive probes even
        // while its connection carries nothing, e.g. a quiet stream: after 30 s idle, then 3 unanswered probes 10 s apart.
        transport.keepAlive(b, 30, 10, 3);
        b.childHandler(pipeline);
        b.option(ChannelOption.AUTO_READ, false);
        try {
            return b.bind(config.httpAddress()).sync().channel();
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) { // sync() rethrows the bind's checked exception (BindException, epoll's) as it is
            throw BindFailure.failed("cannot listen on", config.httpAddress(), HTTP, e);
        }
    }

    /** What retention does, for the line serve logs at start (docs/operations.md, "Retention"). */
    static String describe(RetentionStatus r) {
        if (!r.enabled()) {
            return "none: every segment is kept until POST /admin/checkpoint removes it (set --retention-time or "
                    + "--retention-bytes to remove old segments on their own)";
        }
        return "sealed segments are removed, oldest first, "
                + (r.time() != null ? "once all their records are older than " + Units.duration(r.time()) : "")
                + (r.time() != null && r.bytes() > 0 ? ", and " : "")
                + (r.bytes() > 0 ? "while the log holds more than " + Units.size(r.bytes()) : "")
                + "; never what a replication slot, a consumer cursor or the archiver still needs";
    }

    public InetSocketAddress boundAddress() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    public Wal wal() {
        return wal;
    }

    /** The HTTP endpoints this server routes (docs/http-api.md), each with its token rule. */
    public Routes routes() {
        return router.routes();
    }

    /**
     * HTTP requests received and not yet done: answers not yet sent (streams until they end; appends until
     * acknowledged or refused) and appends still waiting for a segment, whose client may already have gone.
     */
    public int inFlightRequests() {
        return router == null ? 0 : router.inFlight() + data.pendingAppends();
    }

    private static String format(InetSocketAddress a) {
        return a.getAddress().getHostAddress() + ":" + a.getPort();
    }

    /** Stops accepting, finishes in-flight requests (up to 10 s), closes the log, releases the threads. Idempotent. */
    @Override
    public synchronized void close() {
        if (!started) {
            closeUnstarted();
            return;
        }
        started = false;
        router.stopAppends(); // later appends on open connections are refused unwritten (before /ready says 503)
        accepting = false;
        serverChannel.close().awaitUninterruptibly();
        served.stop(); // streams end within half a second, every log's
        long stopping = System.nanoTime();
        boolean remoteWaitsEnded = false;
        while (inFlightRequests() > 0 && System.nanoTime() - stopping < STOP_DRAIN_NANOS) {
            if (!remoteWaitsEnded && System.nanoTime() - stopping >= REMOTE_WAIT_GRACE_NANOS) {
                endRemoteWaits();
                remoteWaitsEnded = true;
            }
            sleep(10);
        }
        readers.shutdown();
        admin.shutdown();
        if (tokensFile != null) {
            tokensFile.close();
        }
        segmentWaits.shutdown();
        if (cluster != null) {
            cluster.close(); // leaves first: the others take over the logs it led
        }
        if (group != null) {
            group.close(); // fences first if primary, then leaves: another member is elected
        }
        if (replication != null) {
            replication.close();
        }
        try {
            logs.close(); // the named logs, flushed
            wal.close(); // flushes; appends still racing now fail cleanly with 503
        } finally {
            shutDownEventLoops();
            readers.shutdownNow();
            closeArchive();
            serverChannel = null;
            LOG.info("Walden server stopped; log closed at {}", Lsn.format(wal.flushedLsn()));
        }
    }

    /**
     * Ends every commit still waiting for the synchronous replicas, on every log, as PostgreSQL's shutdown cancels its
     * waits for synchronous replication: each is answered 503 {@code remote_commit_unconfirmed} (its record is durable
     * locally, the replicas' confirmation may never come). Without this a commit waiting for a replica that is gone
     * held the stop for the whole drain; a replica that is connected confirms well within the grace before it.
     */
    private void endRemoteWaits() {
        for (String name : logs.names()) { // default first
            Wal log = logs.find(name);
            if (log != null) {
                log.replication().remoteWaits().detach("the server is stopping");
            }
        }
    }

    /** A start that failed part-way (or a second close): releases what it took, the log closed as on a clean stop. */
    private void closeUnstarted() {
        try {
            if (serverChannel != null) {
                serverChannel.close().awaitUninterruptibly(); // it never served (joining a cluster, it answered 503)
                serverChannel = null;
            }
            if (cluster != null) {
                cluster.close();
            }
            if (group != null) {
                group.close();
            }
            if (replication != null) {
                replication.close();
            }
            if (logs != null) {
                logs.close();
            }
            if (wal != null && !wal.isClosed()) {
                wal.close(); // opened the log but never accepted
            }
        } finally {
            for (ExecutorService pool : new ExecutorService[] {readers, admin, segmentWaits}) {
                if (pool != null) {
                    pool.shutdownNow(); // nothing ran on them: no request was accepted
                }
            }
            shutDownEventLoops();
            closeArchive();
            if (tokensFile != null) {
                tokensFile.close();
            }
        }
    }

    /** The HTTP event loops. */
    private void shutDownEventLoops() {
        if (workers != null) {
            workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
            workers = null;
        }
        if (boss != null) {
            boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
            boss = null;
        }
    }

    private void closeArchive() {
        if (archive != null) {
            archive.target().close();
            archive = null;
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
