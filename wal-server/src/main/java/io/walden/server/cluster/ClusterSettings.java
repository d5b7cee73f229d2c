package io.walden.server.cluster;

import java.time.Duration;

/**
 * The knobs of a server's membership. {@link #sessionTimeout} is each server's own; the others are the cluster's,
 * written into Helix's {@code ClusterConfig} by the server that creates the cluster (a later server's values are not
 * applied: one cluster, one set of rules; Helix's tools change them afterwards).
 *
 * @param sessionTimeout the ZooKeeper session a server asks for. A server that stops answering (crash, freeze,
 *                       partition) is declared gone, and its logs' primaries moved, this long after its last heartbeat;
 *                       ZooKeeper grants it within its own bounds (2 to 20 ticks: 6 s to 60 s at its built-in 3 s
 *                       tick). Helix's own default, 30 s, made failover take 16-22 s; 6 s is the default here
 * @param movesPerServer how many of a server's logs may be moving at once for balance (Helix's LOAD_BALANCE throttle,
 *                       per instance): a server that joins receives its share this many at a time, each a copy of a
 *                       log. Recovery (a primary or a replica lost with its server) is not throttled
 * @param logsPerServer  the most log replicas (primary or replica) one server holds: the capacity Helix's WAGED
 *                       rebalancer places against. A log that fits nowhere is not placed
 * @param serverCapacity this server's own capacity, in place of {@code logsPerServer}, or {@link #CLUSTER_DEFAULT}:
 *                       each server's own, like the session timeout ({@code max-logs} less its log {@code default}),
 *                       written into its Helix instance config at every join, so that WAGED never places on it more
 *                       copies than it would create
 */
public record ClusterSettings(Duration sessionTimeout, int movesPerServer, int logsPerServer, int serverCapacity) {
    /** {@link #serverCapacity}: none of its own, the cluster's {@code logsPerServer}. */
    public static final int CLUSTER_DEFAULT = -1;
    public static final ClusterSettings DEFAULTS = new ClusterSettings(Duration.ofSeconds(6), 2, 10_000, CLUSTER_DEFAULT);

    public ClusterSettings {
        if (sessionTimeout.toMillis() < 1000 || sessionTimeout.toMillis() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("session timeout " + sessionTimeout + ": at least 1 s");
        }
        if (movesPerServer < 1) {
            throw new IllegalArgumentException("moves per server " + movesPerServer + ": at least 1");
        }
        if (logsPerServer < 1) {
            throw new IllegalArgumentException("logs per server " + logsPerServer + ": at least 1");
        }
        if (serverCapacity < CLUSTER_DEFAULT) {
            throw new IllegalArgumentException("server capacity " + serverCapacity + ": at least 0");
        }
    }

    public ClusterSettings withSessionTimeout(Duration timeout) {
        return new ClusterSettings(timeout, movesPerServer, logsPerServer, serverCapacity);
    }

    public ClusterSettings withMovesPerServer(int moves) {
        return new ClusterSettings(sessionTimeout, moves, logsPerServer, serverCapacity);
    }

    /** This server's own capacity: the most log copies Helix places on it. */
    public ClusterSettings withServerCapacity(int copies) {
        return new ClusterSettings(sessionTimeout, movesPerServer, logsPerServer, copies);
    }
}
