package io.walden.server.cluster;

import org.apache.helix.InstanceType;
import org.apache.helix.manager.zk.ZKHelixManager;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Helix's manager, telling {@link LogRoles} when its ZooKeeper connection breaks and comes back. Helix itself acts on a
 * broken connection only once the session has expired and a new one begun (then it resets every log: {@link
 * LogRoles#sessionEnded}); a server cut off from ZooKeeper would hear nothing while the controller promotes its logs
 * elsewhere. The manager is the ZooKeeper client's state listener, so this subclass sees what it sees.
 *
 * <p>The ZooKeeper client reports Disconnected once nothing has come from the server for two thirds of the session
 * timeout (its read timeout), while the server expires the session only after the whole timeout: a server hears
 * {@link LogRoles#connectionLost} before the controller can know it is gone, so before any of its logs is promoted
 * elsewhere. {@code ClusterPlacementTest} checks that order.
 *
 * <p>Thread-safety: ZooKeeper's client calls both handlers from its one event thread.
 */
final class WatchedHelixManager extends ZKHelixManager {
    private static final Logger LOG = LoggerFactory.getLogger(WatchedHelixManager.class);

    private final LogRoles roles;
    /** Whether {@link LogRoles#connectionLost} was told and {@link LogRoles#connectionRestored} is owed. */
    private volatile boolean lost;
    /** Whether the session expired while lost: then the restoration is told only once the new session is set up. */
    private volatile boolean expired;

    WatchedHelixManager(String cluster, String instance, String zkAddress, LogRoles roles) {
        super(cluster, instance, InstanceType.CONTROLLER_PARTICIPANT, zkAddress);
        this.roles = roles;
    }

    @Override
    public void handleStateChanged(KeeperState state) {
        if (state == KeeperState.Disconnected || state == KeeperState.Expired) {
            expired |= state == KeeperState.Expired;
            if (!lost) {
                lost = true;
                tell(roles::connectionLost, "connectionLost"); // first: Helix may disconnect the manager (flapping)
            }
        }
        super.handleStateChanged(state);
        if (state == KeeperState.SyncConnected && lost && !expired) {
            lost = false;
            tell(roles::connectionRestored, "connectionRestored");
        }
    }

    /** Called on the first session and on each after an expiry; after one, Helix has reset every log by now. */
    @Override
    public void handleNewSession(String sessionId) throws Exception {
        super.handleNewSession(sessionId);
        if (lost) {
            lost = false;
            expired = false;
            tell(roles::connectionRestored, "connectionRestored");
        }
    }

    private static void tell(Runnable call, String what) {
        try {
            call.run();
        } catch (RuntimeException e) {
            LOG.error("the listener failed on {}", what, e);
        }
    }
}
