package io.walden.server;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.MeterRegistry;
import io.walden.core.Wal;
import io.walden.core.archive.ArchiveTargets;
import io.walden.core.internal.thread.WaldenThreads;
import io.walden.replication.replica.StoreReplicaClient;
import io.walden.replication.transport.EventLoops;
import io.walden.server.cluster.ClusterAddress;
import io.walden.server.cluster.ClusterLogSettings;
import io.walden.server.cluster.ClusterMember;
import io.walden.server.cluster.ClusterMeters;
import io.walden.server.cluster.ClusterRoles;
import io.walden.server.cluster.ClusterSettings;
import io.walden.server.cluster.ClusterSummary;
import io.walden.server.cluster.ErrorCopies;
import io.walden.server.cluster.LeadershipRecord;
import io.walden.server.cluster.LogLeadership;
import io.walden.server.cluster.Placement;
import io.walden.server.cluster.PlacedLogs;
import io.walden.server.cluster.Role;
import io.walden.server.cluster.ServerInfo;
import io.walden.server.config.LogArchives;
import io.walden.server.config.ServerConfig;
import io.walden.server.http.ClusterCatalog;
import io.walden.server.logs.LogCatalog;
import io.walden.server.logs.LogRefusedException;
import io.walden.server.logs.ReplicaCopies;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static io.walden.server.config.ServerSettings.ARCHIVE_ENDPOINT;
import static io.walden.server.config.ServerSettings.ARCHIVE_TO;
import static io.walden.server.config.ServerSettings.CLUSTER;
import static io.walden.server.config.ServerSettings.MAX_LOGS;
import static io.walden.server.config.ServerSettings.REPLICATION_SECRET;

/**
 * A server of a cluster ({@code --cluster}, docs/cluster.md): joins it with Helix ({@link ClusterMember}), does each
 * transition's data work on the server's logs ({@link PlacedLogs}, {@link ClusterRoles}), and answers the HTTP API's
 * questions about where a log is ({@link ClusterCatalog}): its primary and replicas, from Helix's placements, refreshed
 * every {@link #REFRESH_MILLIS} on {@code walden-cluster-view}, so that a request never waits on ZooKeeper.
 *
 * <p>Thread-safety: any thread.
 */
final class ClusterNode implements ClusterCatalog, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterNode.class);
    static final long REFRESH_MILLIS = 250;
    /** How long an in-sync replica may not acknowledge before its primary drops it from the in-sync set. */
    static final long LAG_MILLIS = 3_000;
    /** How long a creation waits for a server to lead the new log. */
    static final long CREATE_WAIT_MILLIS = 30_000;
    /** How long a creation waits for a lead before it nudges Helix ({@code ClusterLogs.nudge}), and again after. */
    static final long NUDGE_MILLIS = 3_000;

    private final String self;
    private final String scheme;
    private final CuratorFramework zk;
    private final LogLeadership leadership;
    private final ClusterLogSettings creationSettings;
    private final PlacedLogs placed;
    private final ClusterRoles roles;
    private final ScheduledExecutorService refresher = Executors.newSingleThreadScheduledExecutor(
            WaldenThreads.named("walden-cluster-view"));
    /** {@link #creations()}: a few at once; more wait their turn (each waits seconds for Helix, not for a core). */
    private final ExecutorService creations = Executors.newFixedThreadPool(4, WaldenThreads.numbered("walden-cluster-create"));
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final ObjectMapper JSON = new ObjectMapper();
    private volatile ClusterMember member;
    /** Set before the refresher starts, used by it alone. */
    private ErrorCopies errorCopies;
    /** Helix's placements and servers as last read, together: an answer built from one view never mixes two reads. */
    private record View(Map<String, Placement> placements, Map<String, ClusterSummary.Server> servers) {
    }

    private volatile View view = new View(Map.of(), Map.of());

    private ClusterNode(ServerConfig config, Wal root, LogCatalog catalog, ReplicationRole role, String scheme,
                        EventLoops loops, MeterRegistry registry) {
        ClusterAddress address = ClusterAddress.parse(config.get(CLUSTER));
        this.self = config.name();
        this.scheme = scheme;
        this.zk = CuratorFrameworkFactory.builder().connectString(address.connectString())
                .sessionTimeoutMs(config.coordinatorSessionTimeoutMillis())
                .retryPolicy(new ExponentialBackoffRetry(100, 29, 1000)).build();
        zk.start();
        String base = address.clusterPath() + "/PROPERTYSTORE/walden";
        this.leadership = new LogLeadership(zk, base);
        this.creationSettings = new ClusterLogSettings(zk, base);
        ReplicaCopies copies = new ReplicaCopies(catalog, root);
        this.placed = new PlacedLogs(self, new CatalogHeldLogs(catalog, creationSettings), role.server(), leadership,
                this::replicationAddressOf,
                (primary, logs) -> replicaClient(config, copies, primary, logs, loops), LAG_MILLIS, this::placedOn);
        this.roles = new ClusterRoles(placed, new ClusterMeters(registry, placed));
    }

    /**
     * A replica client of {@code logs} at {@code primary}: a log whose start the primary no longer holds catches up
     * from the cluster's archive (archive-to, the same at every server: {@link LogArchives}), then streams.
     */
    private static StoreReplicaClient replicaClient(ServerConfig config, ReplicaCopies copies, InetSocketAddress primary,
                                                    Set<String> logs, EventLoops loops) {
        StoreReplicaClient.Builder client = StoreReplicaClient.builder(copies, primary, config.name()).only(logs)
                .secret(config.get(REPLICATION_SECRET)).tls(ReplicationRole.clientTls(config)).eventLoops(loops);
        if (config.get(ARCHIVE_TO) != null) { // its own client, closed with the replica client
            client.restoreFrom(ArchiveTargets.open(config.get(ARCHIVE_TO), config.get(ARCHIVE_ENDPOINT)), LogArchives::prefix);
        }
        return client.start();
    }

    /** Joins the cluster as this server, whose HTTP API is at {@code http} (HOST:PORT) over {@code scheme}. */
    static ClusterNode join(ServerConfig config, Wal root, LogCatalog catalog, ReplicationRole role, String scheme,
                            String http, EventLoops loops, MeterRegistry registry) throws Exception {
        ClusterNode node = new ClusterNode(config, root, catalog, role, scheme, loops, registry);
        try {
            InetSocketAddress replication = role.server().address();
            node.member = ClusterMember.join(ClusterAddress.parse(config.get(CLUSTER)), new ServerInfo(config.name(), http,
                    replication.getHostString() + ":" + replication.getPort()), node.roles, ClusterSettings.DEFAULTS
                    .withSessionTimeout(Duration.ofMillis(config.coordinatorSessionTimeoutMillis()))
                    .withServerCapacity(config.get(MAX_LOGS) - 1)); // max-logs counts the log default, not placed
            node.refresh();
            node.errorCopies = new ErrorCopies(node.member.logs(), config.name(), ErrorCopies.GRACE_MILLIS);
            node.refresher.scheduleWithFixedDelay(node::refreshAndReset, REFRESH_MILLIS, REFRESH_MILLIS,
                    TimeUnit.MILLISECONDS);
            return node;
        } catch (Exception | Error e) {
            node.close();
            throw e;
        }
    }

    /**
     * Reads the view again; keeps the last one when ZooKeeper does not answer (the next refresh tries again).
     *
     * @return the view read, or null when it could not be
     */
    private View refresh() {
        try {
            return refreshNow();
        } catch (RuntimeException e) {
            LOG.warn("Could not read the cluster's placements: {}; trying again", e.toString());
            return null;
        }
    }

    /** The refresher's turn: the view, then this server's copies in ERROR, which it resets after their grace. */
    private void refreshAndReset() {
        View now = refresh();
        if (now != null) { // never from an older view: a copy reset since would be reset again
            errorCopies.check(now.placements());
        }
    }

    /** Reads the view again, or throws: for an answer that must not be given from an older view. */
    private synchronized View refreshNow() { // one at a time: a late reader must not replace a newer view
        ClusterMember m = member;
        Map<String, Placement> placements = Map.copyOf(m.logs().placements());
        Map<String, ClusterSummary.Server> byName = new HashMap<>();
        m.logs().summary().servers().forEach(s -> byName.put(s.name(), s));
        View now = new View(placements, Map.copyOf(byName));
        view = now;
        return now;
    }

    /**
     * The servers whose slots on {@code log} stay: those Helix has a copy of it on or is placing one on, and every server
     * not live now (a server restarting leaves Helix's placement at once, and must find its slots when it is back);
     * empty for a log not known.
     */
    private Optional<Set<String>> placedOn(String log) {
        View v = view;
        Placement p = v.placements().get(log);
        if (p == null) {
            return Optional.empty();
        }
        Set<String> keep = new TreeSet<>(p.current().keySet());
        keep.addAll(p.target().keySet());
        v.servers().values().stream().filter(s -> !s.live()).forEach(s -> keep.add(s.name()));
        return Optional.of(keep);
    }

    private InetSocketAddress replicationAddressOf(String server) {
        ClusterSummary.Server s = view.servers().get(server);
        if (s == null) {
            refresh();
            s = view.servers().get(server);
        }
        if (s == null) {
            throw new IllegalStateException("no server named " + server + " in the cluster");
        }
        return ServerConfig.parseAddress(s.replicationAddress(), "the replication address of server " + server);
    }

    @Override
    public String primaryElsewhere(String log) {
        if (placed.isLed(log)) {
            return null;
        }
        // The copy here follows the server that claimed the log; Helix's view may trail a move by a moment.
        View v = view;
        String primary = placed.followedFrom(log);
        if (primary == null) {
            Placement p = v.placements().get(log);
            primary = p == null ? null : p.primary().orElse(null);
        }
        ClusterSummary.Server server = primary == null || primary.equals(self) ? null : v.servers().get(primary);
        return server == null ? null : scheme + "://" + server.httpAddress();
    }

    @Override
    public boolean inCluster(String log) {
        return view.placements().containsKey(log);
    }

    @Override
    public SortedSet<String> logNames() {
        return new TreeSet<>(view.placements().keySet());
    }

    @Override
    public boolean isClusterLog(String log) {
        return view.placements().containsKey(log);
    }

    @Override
    public Map<String, Object> create(String log, int replicas, Map<String, String> settings) throws Exception {
        if (member.logs().names().contains(log)) {
            throw new LogRefusedException(LogRefusedException.Reason.EXISTS, "log '" + log + "' exists in the cluster");
        }
        // before Helix places it: its first primary creates it with them
        if (!creationSettings.create(log, settings, CREATE_WAIT_MILLIS)) {
            throw new LogRefusedException(LogRefusedException.Reason.EXISTS, "log '" + log + "' is being created in the"
                    + " cluster by another request");
        }
        if (!member.logs().add(log, replicas)) {
            throw new LogRefusedException(LogRefusedException.Reason.EXISTS, "log '" + log + "' exists in the cluster");
        }
        long start = System.nanoTime();
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(CREATE_WAIT_MILLIS);
        long nextNudge = start + TimeUnit.MILLISECONDS.toNanos(NUDGE_MILLIS); // a new log is led in 0.3-0.4 s
        while (System.nanoTime() < deadline) {
            LeadershipRecord record = leadership.read(log);
            if (!record.isNone()) {
                refresh();
                return where(log);
            }
            if (System.nanoTime() - nextNudge >= 0) {
                LOG.info("Log {}: no server leads it {} ms after its creation; asking Helix to place it again", log,
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
                member.logs().nudge(log);
                nextNudge = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(NUDGE_MILLIS);
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("log " + log + " was added to the cluster, but no server leads it after "
                + CREATE_WAIT_MILLIS / 1000 + " s: see GET /admin/cluster");
    }

    @Override
    public Executor creations() {
        return creations;
    }

    @Override
    public Map<String, Object> describeAtPrimary(String log, String authorization) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CREATE_WAIT_MILLIS);
        String primary;
        while ((primary = primaryElsewhere(log)) == null && System.nanoTime() < deadline) {
            Thread.sleep(50); // the placement view catches up with the record within a refresh
            refresh();
        }
        if (primary == null) {
            throw new IllegalStateException("log " + log + " was added to the cluster, but its primary is not known yet: "
                    + "see GET /admin/cluster");
        }
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(primary + "/v1/logs/" + log))
                .timeout(Duration.ofSeconds(10)).GET();
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        HttpResponse<String> answer = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        if (answer.statusCode() != 200) {
            throw new IllegalStateException("log " + log + " was added to the cluster; its primary at " + primary
                    + " answered " + answer.statusCode() + " when asked to describe it: " + answer.body());
        }
        return JSON.readValue(answer.body(), new TypeReference<LinkedHashMap<String, Object>>() { });
    }

    @Override
    public void setReplicas(String log, int replicas) {
        if (!member.logs().setReplicas(log, replicas)) {
            throw new LogRefusedException(LogRefusedException.Reason.NOT_FOUND, "no log '" + log + "' in the cluster");
        }
        LOG.info("Log {}: {} copies from now on", log, replicas);
    }

    @Override
    public boolean delete(String log) throws Exception {
        boolean removed = member.logs().remove(log);
        if (removed) {
            leadership.delete(log);
            refresh();
        }
        return removed;
    }

    @Override
    public Map<String, Object> drain(boolean on) {
        if (on) {
            boolean elsewhere = current().servers().values().stream()
                    .anyMatch(s -> !s.name().equals(self) && s.live() && !s.draining());
            if (!elsewhere) {
                throw new LogRefusedException(LogRefusedException.Reason.NO_OTHER_SERVER, "no other live server that is"
                        + " not draining: this server's logs would have nowhere to go");
            }
        }
        member.drain(on);
        LOG.info(on ? "Draining: the cluster moves every log off this server" : "No longer draining");
        return drainStatus();
    }

    @Override
    public Map<String, Object> drainStatus() {
        // read now, so that this server's view of the cluster (GET /admin/cluster) agrees with the answer
        ClusterSummary.Server here = current().servers().get(self);
        if (here == null) {
            throw new IllegalStateException("this server is not registered in the cluster");
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("server", self);
        out.put("draining", here.draining());
        out.put("logs", here.copies());
        out.put("done", here.draining() && here.copies() == 0 && member.isDrained());
        return out;
    }

    /** The view read now; answers 503 {@code cluster_unavailable} when ZooKeeper does not answer. */
    private View current() {
        try {
            return refreshNow();
        } catch (RuntimeException e) {
            throw new LogRefusedException(LogRefusedException.Reason.CLUSTER_UNAVAILABLE, "the cluster's ZooKeeper did"
                    + " not answer: " + e.getMessage());
        }
    }

    @Override
    public Map<String, Object> where(String log) {
        return where(log, view);
    }

    private Map<String, Object> where(String log, View v) {
        Map<String, Object> out = new LinkedHashMap<>();
        Placement p = v.placements().get(log);
        // Helix's view trails a transition by a moment: a log this server took over is its own at once (and it may
        // still be listed as a replica there).
        String primary = placed.isLed(log) ? self : p == null ? null : p.primary().orElse(null);
        List<String> replicas = new ArrayList<>(p == null ? List.of() : p.serversIn(Role.REPLICA));
        replicas.remove(primary);
        out.put("primary", primary);
        out.put("replicas", replicas);
        return out;
    }

    @Override
    public Map<String, Object> overview() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("cluster", member.address().toString());
        out.put("server", self);
        View v = view;
        out.put("servers", v.servers().values().stream().sorted(Comparator.comparing(ClusterSummary.Server::name))
                .toList());
        Map<String, Object> logs = new LinkedHashMap<>();
        new TreeMap<>(v.placements()).forEach((name, p) -> {
            Map<String, Object> one = where(name, v);
            one.put("moves", p.moves());
            logs.put(name, one);
        });
        out.put("logs", logs);
        return out;
    }

    @Override
    @SuppressWarnings("unchecked")
    public Map<String, Object> status() {
        Map<String, Object> out = overview();
        out.put("controller", member.isController());
        ((Map<String, Object>) out.get("logs")).forEach((name, value) -> {
            Map<String, Object> one = (Map<String, Object>) value;
            try {
                LeadershipRecord record = leadership.read(name);
                one.put("epoch", record.epoch());
                one.put("leader", record.primary()); // who claimed it: the placement's primary once it took over
                one.put("in_sync", record.inSync());
            } catch (Exception e) {
                one.put("leadership_error", e.toString());
            }
        });
        return out;
    }

    @Override
    public void close() {
        refresher.shutdownNow();
        creations.shutdownNow(); // a creation still waiting for its log's primary stops waiting
        ClusterMember m = member;
        if (m != null) {
            m.close(); // first: the others take over its logs while it stops
        }
        roles.close();
        placed.close();
        zk.close();
    }
}
