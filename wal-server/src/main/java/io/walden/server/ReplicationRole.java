package io.walden.server;

import io.micrometer.core.instrument.MeterRegistry;
import io.netty.handler.ssl.SslContext;
import io.walden.core.Epoch;
import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.core.archive.ArchiveTargets;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.replica.PrimaryIdentity;
import io.walden.replication.tls.ReplicationTls;
import io.walden.replication.transport.EventLoops;
import io.walden.replication.replica.StoreReplicaClient;
import io.walden.server.config.LogArchives;
import io.walden.server.config.ServerConfig;
import io.walden.server.logs.LogCatalog;
import io.walden.server.logs.ReplicaCopies;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.walden.server.config.ServerSettings.ARCHIVE_ENDPOINT;
import static io.walden.server.config.ServerSettings.CLUSTER;
import static io.walden.server.config.ServerSettings.MAX_REPLICAS;
import static io.walden.server.config.ServerSettings.MAX_SLOT_RETAINED_BYTES;
import static io.walden.server.config.ServerSettings.REPLICATE_FROM;
import static io.walden.server.config.ServerSettings.REPLICATION_INSECURE;
import static io.walden.server.config.ServerSettings.REPLICATION_LISTEN;
import static io.walden.server.config.ServerSettings.REPLICATION_SECRET;
import static io.walden.server.config.ServerSettings.REPLICATION_TLS_CA;
import static io.walden.server.config.ServerSettings.REPLICATION_TLS_CERT;
import static io.walden.server.config.ServerSettings.REPLICATION_TLS_KEY;
import static io.walden.server.config.ServerSettings.RESTORE_FROM;
import static io.walden.server.config.ServerSettings.SHIP_FLUSHED_ONLY;
import static io.walden.server.config.ServerSettings.SYNC_REPLICAS;

/**
 * The server's place in replication: a primary (a {@link ReplicationServer} accepting replicas) or a replica (a
 * {@link Following} receiver of its primary, and a {@code ReplicationServer} of its own when cascading), and the
 * promotion from one to the other. Every log of the {@link LogCatalog} is replicated, over one connection per primary
 * (a {@link StoreReplicaClient}), a replica group's member's included: the endpoint takes the catalog's logs after each
 * creation, change and deletion, and a member becomes primary, is fenced and hands over with every log together. A
 * replica that catches up from an archive ({@code restore-from}) fetches each log from where its primary archives it. Applies the safety rule: replicas are accepted on a
 * non-loopback address only with TLS and authentication, or an explicit, logged opt-out.
 *
 * <p>Threads: the endpoint and the receiver run on the event loops given (the server's, shared: closing this never
 * shuts them down, so the server shuts them down after {@link #close()}), or each on a NIO group of its own when
 * none is. Once closed, a role change that would start either is refused: nothing starts on a group about to go.
 *
 * <p>Thread-safety: every method may be called from any thread but those event loops; role changes are serialised.
 */
public final class ReplicationRole implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicationRole.class);

    private final Wal wal;
    /** Every log of the server: the named logs are served to replicas, or copied from the primary, with {@code default}. */
    private final LogCatalog catalog;
    private final ServerConfig config;
    private final MeterRegistry registry;
    /** Where the endpoint and the receiver run; null: each on a NIO group of its own. */
    private final EventLoops loops;
    private volatile ReplicationServer server;
    private volatile Following replica;
    /** Set by close(), under the lock: no endpoint or receiver starts after it. */
    private boolean closed;

    private ReplicationRole(Wal wal, LogCatalog catalog, ServerConfig config, MeterRegistry registry, EventLoops loops) {
        this.wal = wal;
        this.catalog = catalog;
        this.config = config;
        this.registry = registry;
        this.loops = loops;
        catalog.addListener(new LogCatalog.Listener() {
            // Under the catalog's lock, before a created log is offered to applications: until the endpoint takes it,
            // it has no synchronous policy, and an append at a remote level would pass as local.
            @Override
            public void created(String name, Wal log) {
                refreshServedLogs();
            }

            @Override
            public void deleted(String name, Wal log) {
                refreshServedLogs();
            }

            // A log reopened with new settings is another Wal of the same log: the endpoint serves it anew, and its
            // replicas are told the settings and resume from their own ends (docs/operations.md, "Named logs").
            @Override
            public void replaced(String name, Wal old, Wal reopened) {
                refreshServedLogs();
            }
        });
    }

    /** The endpoint (a primary's, or a cascading replica's) takes the store's logs as they are now. */
    private void refreshServedLogs() {
        ReplicationServer s = server;
        if (s != null) {
            s.refreshLogs();
        }
    }

    /**
     * Checks the listening rules before anything is opened. The replication port streams the whole log, so it is never
     * less protected than the data API: with an HTTP token, replicas must authenticate (a secret or mutual TLS) even
     * on loopback, where any local process could otherwise read past the token; off loopback, they need TLS and
     * authentication. Each rule has the explicit, logged opt-out --replication-insecure.
     */
    static void checkSafety(ServerConfig config) {
        checkSafety(config, config.replicationListen());
    }

    /** {@link #checkSafety(ServerConfig)} for replicas accepted on {@code listen} (null: none). */
    private static void checkSafety(ServerConfig config, InetSocketAddress listen) {
        if (listen == null) {
            return; // replication-listen none, or a replica serving no cascade
        }
        boolean tls = config.get(REPLICATION_TLS_CERT) != null;
        // Client certificates are checked only when this side serves TLS: a CA alone authenticates nobody.
        boolean authenticated = config.get(REPLICATION_SECRET) != null || (tls && config.get(REPLICATION_TLS_CA) != null);
        if (config.tokenRequired() && !authenticated) {
            if (!config.get(REPLICATION_INSECURE)) {
                throw new IllegalStateException("refusing to accept replicas on " + listen
                        + " without authentication while the HTTP API requires a token: any local process could stream the "
                        + "whole log past it; set --replication-secret (or mutual TLS with --replication-tls-cert/-key and "
                        + "--replication-tls-ca), or opt out with --replication-insecure");
            }
            LOG.warn("INSECURE: the HTTP API requires a token but replicas on {} need no authentication "
                    + "(--replication-insecure): any process that can reach it can read the whole log", listen);
        }
        if (listen.getAddress().isLoopbackAddress()) {
            return;
        }
        if (tls && authenticated) {
            return;
        }
        if (!config.get(REPLICATION_INSECURE)) {
            throw new IllegalStateException("refusing to accept replicas on " + listen + " without "
                    + (tls ? "" : "TLS (--replication-tls-cert/--replication-tls-key)" + (authenticated ? "" : " and "))
                    + (authenticated ? "" : "authentication (--replication-secret or --replication-tls-ca)")
                    + ": configure them, bind a loopback address, or opt out with --replication-insecure");
        }
        LOG.warn("INSECURE: accepting replicas on {} with{} TLS and with{} authentication (--replication-insecure): anyone "
                + "who can reach it can read the whole log", listen, tls ? "" : "out", authenticated ? "" : "out");
    }

    /**
     * Starts the role the configuration asks for, on {@code loops} (shared by the caller; null: groups of
     * their own).
     */
    static ReplicationRole start(Wal wal, LogCatalog catalog, ServerConfig config, MeterRegistry registry,
                                 EventLoops loops) throws InterruptedException {
        ReplicationRole role = new ReplicationRole(wal, catalog, config, registry, loops);
        try {
            InetSocketAddress primary = config.get(REPLICATE_FROM);
            if (primary != null) {
                catalog.following("this server is a replica of " + primary.getHostString() + ":" + primary.getPort()
                        + " (replicate-from): its logs are its primary's, created, changed and deleted there");
                ReplicaCopies copies = new ReplicaCopies(catalog, wal);
                StoreReplicaClient.Builder client = StoreReplicaClient.builder(copies, primary, config.name())
                        .secret(config.get(REPLICATION_SECRET)).tls(clientTls(config)).eventLoops(loops)
                        .onLogsChanged(role::refreshServedLogs); // cascading: this replica's replicas follow its set
                if (config.get(RESTORE_FROM) != null) { // each log from where its primary archives it (LogArchives)
                    client.restoreFrom(ArchiveTargets.openExisting(config.get(RESTORE_FROM), config.get(ARCHIVE_ENDPOINT)),
                            LogArchives::prefix);
                }
                role.replica = Following.of(client.start(), copies);
                catalog.replicatedWith(role::slotsOf);
                if (config.replicationListen() != null) {
                    role.startServer(config.replicationListen()); // cascading: serve replicas of this replica
                }
            } else {
                if (config.get(CLUSTER) != null) {
                    refuseClusterCopies(wal, catalog);
                }
                if (config.replicationListen() != null) { // replication-listen none: a primary on its own
                    role.startServer(config.replicationListen());
                    if (config.get(SYNC_REPLICAS) != null) {
                        role.server.policy(SyncPolicy.parse(config.get(SYNC_REPLICAS)));
                    }
                }
                refuseAReplicasLog(wal);
            }
            return role;
        } catch (RuntimeException | InterruptedException e) {
            role.close();
            throw e;
        }
    }

    /**
     * A cluster's server leads none of its copies until it claims them (PlacedLogs, which refuses them too, once it
     * starts): they are refused before the replication endpoint starts. It must be so: a copy that was a replica's when
     * the server was killed began no epoch when it was opened again (a replica's log never begins one on its own), and the
     * endpoint refuses to start on a log that takes appends after a crash in the epoch it crashed in (its replicas could
     * hold records it lost): without this, a server killed -9 while it held a replica copy did not start again. The log
     * {@code default} is the server's own, and not refused.
     */
    private static void refuseClusterCopies(Wal root, LogCatalog catalog) {
        for (String name : catalog.names()) {
            Wal log = catalog.find(name);
            if (log != null && log != root) {
                log.replication().refuseAppends("this server does not lead log " + name + " (yet): write to its primary");
            }
        }
    }

    /**
     * A replica's log started as a primary (the server was restarted without {@code replicate-from}) is refused: its
     * readers stop at what its old primary confirmed, and taking appends would begin a history its primary never had,
     * for good. A mistaken configuration must not do that; a promotion is asked for by name (POST /admin/promote on the
     * replica, which works with its primary gone). A log that began its current epoch itself (promoted, even if it
     * crashed before its checkpoint recorded it) has no read limit and starts as a primary.
     */
    private static void refuseAReplicasLog(Wal wal) {
        long limit = wal.readLimit();
        if (limit != Long.MAX_VALUE) {
            throw new IllegalStateException("the log in " + wal.config().directory() + " is a replica's (its readers stop at "
                    + Lsn.format(limit) + ", what its primary confirmed): start it with --replicate-from its "
                    + "primary, and promote it with POST /admin/promote if it is to take appends");
        }
    }

    /**
     * A member of a replica group before the coordinator has placed it: neither serving nor following, refusing
     * appends; {@link io.walden.server.group.FailoverController} then calls {@link #follow} or {@link #becomePrimary}.
     */
    public static ReplicationRole standby(Wal wal, LogCatalog catalog, ServerConfig config, MeterRegistry registry,
                                          EventLoops loops) {
        ReplicationRole role = new ReplicationRole(wal, catalog, config, registry, loops);
        role.refuseEveryLog("this member of a replica group is neither primary nor following one yet; "
                + "see /admin/status for the group's primary");
        return role;
    }

    /**
     * Every log refuses appends with {@code reason}, and users may not create, change or delete logs: none of them
     * changes by this server's users until {@link #becomePrimary} (a creation under way finishes first, and is refused).
     */
    private void refuseEveryLog(String reason) {
        refuse(catalog.names(), reason); // at once: a fence must not wait for a creation under way
        refuse(catalog.freeze(reason), reason); // and a log that creation made
    }

    private void refuse(List<String> names, String reason) {
        for (String name : names) {
            Wal log = catalog.find(name);
            if (log != null) {
                log.replication().refuseAppends(reason);
            }
        }
    }

    /** The newest epoch any log of this server is in: a group's next epoch is numbered past it, for every log. */
    public int newestEpoch() {
        int newest = wal.status().history().current().number();
        for (String name : catalog.names()) {
            Wal log = catalog.find(name);
            if (log != null) {
                newest = Math.max(newest, log.status().history().current().number());
            }
        }
        return newest;
    }

    /**
     * Follows the primary at {@code primary} (a replica group's member, told by its coordinator; {@code primaryHttp} is
     * where applications reach it, named in the refusal of local appends): every log of it, over one connection, as
     * {@code replicate-from} does (its logs created, changed and deleted as there). Stops serving replicas if it did (a
     * demoted primary), and switches from another primary if it followed one. Each log's handshake rewinds any tail the
     * new primary's history of that log does not hold (docs/replication.md).
     *
     * @throws IllegalStateException once closed
     */
    public synchronized void follow(InetSocketAddress primary, String primaryHttp) {
        if (replica != null && replica.primary().equals(primary)) {
            return;
        }
        refuseOnceClosed();
        closeServer();
        closeReplica();
        refuseEveryLog("this member follows the group's primary at " + primaryHttp + ": write there");
        ReplicaCopies copies = new ReplicaCopies(catalog, wal);
        replica = Following.of(StoreReplicaClient.builder(copies, primary, config.name()).primaryHttp(primaryHttp)
                .secret(config.get(REPLICATION_SECRET)).tls(clientTls(config)).eventLoops(loops).start(), copies);
        catalog.replicatedWith(this::slotsOf);
    }

    /** Stops following (the primary is gone): every log keeps refusing appends and receives nothing more. */
    public synchronized void stopFollowing() {
        closeReplica();
        refuseEveryLog("this member's primary is gone and the group is electing another; see /admin/status");
    }

    /**
     * Makes this member the primary (its coordinator has recorded it in a new epoch): stops following, serves replicas,
     * applies the configured synchronous policy, then begins the new epoch durably (numbered at least
     * {@code atLeastNumber}, the number the coordinator recorded) and accepts appends.
     *
     * @throws IllegalStateException when replicas cannot be served or the history cannot be written: appends stay refused
     */
    public synchronized Epoch becomePrimary(int atLeastNumber) throws InterruptedException {
        closeReplica();
        if (server == null) {
            startServer(config.replicationListen()); // a member always listens (checked when loaded)
        }
        if (config.get(SYNC_REPLICAS) != null) {
            server.policy(SyncPolicy.parse(config.get(SYNC_REPLICAS)));
        }
        // Every log together, each numbered the same (the caller numbered it past every log's newest): the named
        // logs first, so that a failure leaves default refusing and the member fences itself.
        for (String name : catalog.names()) {
            Wal log = catalog.find(name);
            if (log != null && log != wal) {
                log.replication().promote(atLeastNumber);
            }
        }
        Epoch epoch = wal.replication().promote(atLeastNumber);
        catalog.following(null); // a primary's users create, change and delete its logs
        return epoch;
    }

    /**
     * Stops acknowledging at once: appends are refused, then the replication endpoint closes, so that no replica's
     * confirmation releases a waiting commit any more (they fail as "durable locally, not confirmed"). The refusal is
     * taken before the lock: a fence must never wait behind a promotion.
     */
    public void fence(String reason) {
        wal.replication().refuseAppends(reason); // default first, without waiting for a creation under way
        refuseEveryLog(reason);
        synchronized (this) {
            closeServer();
        }
    }

    /**
     * Pauses appends to every log while replicas keep streaming (a switchover lets its target catch up: refused as on a
     * replica, a log's own senders would stop at what was flushed then), and users' creations, changes and deletions of
     * logs; waits until the appends already past the check have left each log, and flushes them.
     *
     * @return each log's end by name, {@code default} included, which no longer moves; null when appends in flight did
     *         not leave within the timeout
     */
    public Map<String, Long> pauseAndDrainAppends(String reason, long timeoutMillis) throws InterruptedException {
        List<String> names = catalog.freeze(reason);
        Map<String, Wal> logs = new LinkedHashMap<>();
        for (String name : names) {
            Wal log = catalog.find(name);
            if (log != null) {
                log.replication().pauseAppends(reason);
                logs.put(name, log);
            }
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        Map<String, Long> ends = new LinkedHashMap<>();
        for (Map.Entry<String, Wal> e : logs.entrySet()) {
            long end = e.getValue().replication().drainAppends(Math.max(0, deadline - System.nanoTime()),
                    TimeUnit.NANOSECONDS);
            if (end < 0) {
                return null;
            }
            e.getValue().flush(); // the last appends' bytes written and forced now, not at the next writer tick
            ends.put(e.getKey(), end);
        }
        return ends;
    }

    private void closeReplica() {
        if (replica != null) {
            replica.close();
            replica = null;
        }
    }

    private void closeServer() {
        if (server != null) {
            server.close();
            server = null;
        }
    }

    /** What a new replica needs from its primary before its log can be created. */
    static PrimaryIdentity fetchIdentity(ServerConfig config) throws InterruptedException {
        return fetchIdentity(config, config.get(REPLICATE_FROM));
    }

    /** As {@link #fetchIdentity(ServerConfig, InetSocketAddress, EventLoops)}, on an own NIO group. */
    public static PrimaryIdentity fetchIdentity(ServerConfig config, InetSocketAddress primary)
            throws InterruptedException {
        return fetchIdentity(config, primary, null);
    }

    /**
     * What a new replica needs from the primary at {@code primary} before its log can be created, asked on
     * {@code loops} (shared, left running; null: a NIO group of its own, shut down after).
     */
    public static PrimaryIdentity fetchIdentity(ServerConfig config, InetSocketAddress primary,
                                                                              EventLoops loops) throws InterruptedException {
        return PrimaryIdentity.fetch(primary, config.name(), clientTls(config),
                config.get(REPLICATION_SECRET), 30_000, loops == null ? EventLoops.ownNio() : loops);
    }

    /** TLS to the primary when a CA or a certificate of its own is configured (never a secret in the clear then). */
    static SslContext clientTls(ServerConfig config) {
        return config.get(REPLICATION_TLS_CA) == null && config.get(REPLICATION_TLS_CERT) == null ? null
                : ReplicationTls.client(config.get(REPLICATION_TLS_CA), config.get(REPLICATION_TLS_CERT), config.get(REPLICATION_TLS_KEY));
    }

    private void startServer(InetSocketAddress listen) throws InterruptedException {
        refuseOnceClosed();
        SslContext tls = config.get(REPLICATION_TLS_CERT) == null ? null
                : ReplicationTls.server(config.get(REPLICATION_TLS_CERT), config.get(REPLICATION_TLS_KEY), config.get(REPLICATION_TLS_CA));
        ReplicationServer s;
        try {
            s = ReplicationServer.builder(wal).store(catalog::openedStore, this::toldSettings)
                    .listen(listen).keepaliveMillis(10_000)
                    .shipFlushedOnly(config.get(SHIP_FLUSHED_ONLY))
                    .maxSlotRetainedBytes(config.get(MAX_SLOT_RETAINED_BYTES)).maxReplicas(config.get(MAX_REPLICAS))
                    .secret(config.get(REPLICATION_SECRET)).tls(tls).eventLoops(loops).start();
        } catch (IllegalStateException e) {
            if (e.getCause() instanceof IOException bind) { // the address is taken, or not this machine's
                throw BindFailure.failed("cannot listen for replicas on", listen, REPLICATION_LISTEN, bind);
            }
            throw e;
        }
        s.meterBinder().bindTo(registry);
        server = s;
        catalog.replicatedWith(this::slotsOf);
    }

    /** A log's settings as its replicas are told them (none for a log deleted meanwhile). */
    private Map<String, String> toldSettings(String name) {
        Wal log = catalog.find(name);
        return log == null ? Map.of() : ReplicaCopies.told(log);
    }

    /** The replication slots that still need log {@code name} (none when no endpoint serves replicas now). */
    private Map<String, Long> slotsOf(String name) {
        ReplicationServer s = server;
        return s == null ? Map.of() : s.slots(name);
    }

    /** The endpoint serving replicas (a primary's, or a cascading replica's), or null. */
    public ReplicationServer server() {
        return server;
    }

    /** The primary this server follows, or null when it is a primary. */
    public InetSocketAddress primary() {
        Following r = replica;
        return r == null ? null : r.primary();
    }

    /** This server's receiver when it is a replica, or null. */
    public Following replica() {
        return replica;
    }

    /** What a promotion did: the new epoch. */
    public record Promotion(Epoch epoch) {
    }

    /**
     * Makes this replica a primary: binds replica-listen first (if it was not already serving cascading replicas,
     * which then reconnect and learn the new epoch), then stops following, begins a new epoch (durably), accepts
     * appends, and applies the configured sync-replicas policy.
     *
     * @throws IllegalStateException when this server is not a replica, or the promotion could not finish (the
     *                               replication port cannot be bound, the history cannot be written): the log then
     *                               still refuses appends, and a retry tries again
     */
    public synchronized Promotion promote() throws InterruptedException {
        Following r = replica;
        if (r == null) {
            throw new IllegalStateException("this server is already a primary (epoch " + wal.status().epoch() + ")");
        }
        InetSocketAddress listen = config.replicationListenOrDefault();
        if (server == null && listen != null) { // replication-listen none: a primary on its own, as configured
            checkSafety(config, listen); // the rules a primary started with: a promotion must not open the log wider
            try {
                startServer(listen); // before the point of no return: a primary that cannot take replicas is refused
            } catch (RuntimeException e) {
                throw new IllegalStateException("cannot promote: " + e.getMessage() + "; still a replica", e);
            }
        }
        SyncPolicy before = server == null ? null : server.policy();
        if (server != null && config.get(SYNC_REPLICAS) != null) {
            // Before appends are accepted: an ON commit in between must wait for the policy, never pass as LOCAL.
            server.policy(SyncPolicy.parse(config.get(SYNC_REPLICAS))); // validated when the configuration was loaded
        }
        Epoch epoch;
        try {
            epoch = r.promote(0);
        } catch (RuntimeException e) {
            if (server != null) {
                server.policy(before); // still a replica: its cascading endpoint keeps the policy it had
            }
            throw e;
        }
        replica = null;
        catalog.following(null); // a primary's users create, change and delete its logs
        return new Promotion(epoch);
    }

    /** Closes the receiver and the endpoint (the server shuts their shared event loops down after this). */
    @Override
    public synchronized void close() {
        closed = true;
        closeReplica();
        closeServer();
    }

    /** A role started after close() would run on event loops the server is about to shut down, and never be closed. */
    private void refuseOnceClosed() {
        if (closed) {
            throw new IllegalStateException("replication is closed: the server is stopping");
        }
    }
}
