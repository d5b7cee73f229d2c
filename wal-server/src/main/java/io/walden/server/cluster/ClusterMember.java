package io.walden.server.cluster;

import org.apache.helix.HelixManager;
import org.apache.helix.SystemPropertyKeys;
import org.apache.helix.constants.InstanceConstants;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;

/**
 * This server's membership of a cluster: {@link #join} creates the cluster if it is the first (docs/cluster.md),
 * registers the server with its addresses, and connects to Helix as a controller-participant: the server holds logs
 * (participant) and may run the cluster's Helix controller (every server competes; one leads, another takes over
 * within a session timeout when it goes). From then on Helix calls {@link LogRoles} as it places logs here.
 * {@link #close} leaves: the server's logs' roles end ({@link LogRoles#sessionEnded}), its live-instance node goes at
 * once, and the controller (here or elsewhere) moves its primaries to their replicas without waiting for a timeout.
 *
 * <p>Thread-safety: every method may be called from any thread; {@link #close} once.
 */
public final class ClusterMember implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterMember.class);
    /** How long {@link #join} waits for ZooKeeper and for the setup lock. */
    private static final Duration JOIN_TIMEOUT = Duration.ofSeconds(30);

    private final ClusterAddress address;
    private final ServerInfo self;
    private final HelixManager manager;
    private final ClusterLogs logs;

    private ClusterMember(ClusterAddress address, ServerInfo self, HelixManager manager) {
        this.address = address;
        this.self = self;
        this.manager = manager;
        this.logs = new ClusterLogs(address.clusterName(), manager);
    }

    /**
     * Joins {@code address} as {@code self}; returns once connected (Helix may already be calling {@code roles}).
     *
     * @throws Exception when ZooKeeper cannot be reached, the cluster's node is not a whole Helix cluster, or Helix
     *                   refuses the connection (another live server under the same name)
     */
    public static ClusterMember join(ClusterAddress address, ServerInfo self, LogRoles roles, ClusterSettings settings)
            throws Exception {
        ClusterSetup.prepare(address, self, settings, JOIN_TIMEOUT);
        HelixManager manager = newManager(address, self.name(), settings.sessionTimeout(), roles);
        manager.getStateMachineEngine().registerStateModelFactory(ClusterSetup.STATE_MODEL, new LogStateModelFactory(roles));
        try {
            manager.connect();
        } catch (Exception e) {
            manager.disconnect();
            throw e;
        }
        LOG.info("joined cluster {} as {} (session timeout {})", address, self.name(), settings.sessionTimeout());
        return new ClusterMember(address, self, manager);
    }

    /**
     * Helix reads its session timeout from a system property when a manager is made, and from nowhere else in single-
     * ZooKeeper mode: it is set for the constructor's duration only, under a lock, and restored after.
     */
    private static HelixManager newManager(ClusterAddress address, String name, Duration sessionTimeout, LogRoles roles) {
        synchronized (ClusterMember.class) {
            String key = SystemPropertyKeys.ZK_SESSION_TIMEOUT;
            String before = System.getProperty(key);
            System.setProperty(key, Long.toString(sessionTimeout.toMillis()));
            try {
                return new WatchedHelixManager(address.clusterName(), name, address.helixZkAddress(), roles);
            } finally {
                if (before == null) {
                    System.clearProperty(key);
                } else {
                    System.setProperty(key, before);
                }
            }
        }
    }

    public ClusterAddress address() {
        return address;
    }

    public ServerInfo self() {
        return self;
    }

    /** Whether this server runs the cluster's Helix controller now. */
    public boolean isController() {
        return manager.isConnected() && manager.isLeader();
    }

    /**
     * Starts ({@code true}) or ends this server's drain (docs/cluster.md, "Draining a server"): Helix's EVACUATE
     * operation on it, which places no copy here and moves each copy it holds to another server: a replica is placed
     * elsewhere before this one goes, a primary is handed over (a planned MASTER→SLAVE here). The operation is kept in
     * the server's Helix config: a drained server that restarts stays drained until it is ended.
     */
    public void drain(boolean on) {
        manager.getClusterManagmentTool().setInstanceOperation(address.clusterName(), self.name(),
                on ? InstanceConstants.InstanceOperation.EVACUATE : InstanceConstants.InstanceOperation.ENABLE,
                on ? "POST /admin/drain" : "DELETE /admin/drain");
    }

    /** Whether this server is drained: it is draining, holds no log and has no transition pending. */
    public boolean isDrained() {
        return manager.getClusterManagmentTool().isEvacuateFinished(address.clusterName(), self.name());
    }

    /** The cluster's logs: add, resize, remove, read where they are. */
    public ClusterLogs logs() {
        return logs;
    }

    @Override
    public void close() {
        manager.disconnect();
        LOG.info("left cluster {} as {}", address, self.name());
    }
}
