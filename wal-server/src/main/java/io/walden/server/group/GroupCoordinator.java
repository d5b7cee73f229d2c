package io.walden.server.group;

import io.walden.server.logging.Units;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.SessionConnectionStateErrorPolicy;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A member's view of its group in ZooKeeper, through Curator (the node layout is in docs/operations.md, "Replica
 * groups"): its own ephemeral member node ({@code members/NAME}), the leader latch ({@code leader}) and the
 * epoch record ({@code epoch}). It holds no policy: {@link FailoverController} decides, this reads and writes.
 *
 * <p>The latch keeps leadership through a suspended connection and loses it only when the session is lost
 * ({@link SessionConnectionStateErrorPolicy}): while the session lives, no other member can lead. The primary does not
 * rely on that while suspended: it stops acknowledging at once (see {@link FailoverController}).
 *
 * <p>Thread-safety: the latch methods are called from the controller's thread only; the rest from any thread.
 */
final class GroupCoordinator implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GroupCoordinator.class);

    private final CoordinatorUri uri;
    private final String name;
    private final CuratorFramework client;
    /** The session timeout asked for; ZooKeeper grants one within its own bounds (see {@link #sessionTimeoutMs}). */
    private final int requestedSessionTimeoutMs;
    /** The timeout granted to the last session, as last noticed (0 before the first); Curator's event thread writes. */
    private volatile int noticedSessionTimeoutMs;
    private volatile ConnectionState connection; // null until the first change
    private PersistentNode memberNode;
    private LeaderLatch latch;

    GroupCoordinator(CoordinatorUri uri, String name, int sessionTimeoutMs, Consumer<ConnectionState> onChange) {
        this.uri = uri;
        this.name = name;
        this.requestedSessionTimeoutMs = sessionTimeoutMs;
        this.client = CuratorFrameworkFactory.builder()
                .connectString(uri.connectString())
                .sessionTimeoutMs(sessionTimeoutMs)
                .connectionTimeoutMs(Math.min(sessionTimeoutMs, 15_000))
                .retryPolicy(new ExponentialBackoffRetry(100, 29, 1000))
                .connectionStateErrorPolicy(new SessionConnectionStateErrorPolicy())
                .build();
        client.getConnectionStateListenable().addListener((c, state) -> {
            connection = state;
            if (state.isConnected()) {
                noticeGrantedTimeout(); // a new session may be granted another timeout
            }
            onChange.accept(state);
        });
    }

    /**
     * Connects (waiting up to {@code waitMillis}) and registers this member once no node of an earlier session
     * holds its name (a member restarted before its old session expired waits for that, up to a session timeout).
     */
    void start(Member self, long waitMillis) throws InterruptedException {
        client.start();
        if (!client.blockUntilConnected((int) waitMillis, TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("cannot reach the coordinator " + uri + " within " + waitMillis + " ms");
        }
        call(() -> {
            ensureGroup();
            return null;
        });
        String path = memberPath(name);
        // An earlier session expires on the timeout it was granted: at most the larger of the two, as this one's.
        long previous = Math.max(sessionTimeoutMs(), requestedSessionTimeoutMs);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2L * previous + waitMillis);
        while (true) {
            Stat stat = call(() -> client.checkExists().forPath(path));
            long session = call(() -> client.getZookeeperClient().getZooKeeper().getSessionId());
            if (stat == null || stat.getEphemeralOwner() == session) {
                break;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("another member named '" + name + "' is registered in " + uri
                        + ": each member of a group needs its own --name");
            }
            LOG.info("Waiting for the previous session of member '{}' to expire in {}", name, uri);
            Thread.sleep(200);
        }
        memberNode = new PersistentNode(client, CreateMode.EPHEMERAL, false, path, self.toJson());
        memberNode.start();
        if (!memberNode.waitForInitialCreate(waitMillis, TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("cannot register member '" + name + "' in " + uri);
        }
    }

    /**
     * Publishes what this member is now (its node is re-created with this data after a session loss).
     *
     * @return false when it could not be written now (retry on the next change or tick)
     */
    boolean publish(Member self) {
        try {
            memberNode.setData(self.toJson());
            return true;
        } catch (Exception e) {
            LOG.debug("Cannot publish member '{}' now: {}", name, e.toString());
            return false;
        }
    }

    /** The members registered now, by name; members whose node cannot be read are left out. */
    Map<String, Member> members() throws Exception {
        Map<String, Member> out = new TreeMap<>();
        for (String child : client.getChildren().forPath(uri.path() + "/members")) {
            try {
                out.put(child, Member.fromJson(client.getData().forPath(memberPath(child))));
            } catch (KeeperException.NoNodeException e) {
                // gone between the two reads
            } catch (IllegalArgumentException e) {
                LOG.warn("Ignoring the unreadable member node {}: {}", child, e.getMessage());
            }
        }
        return out;
    }

    /** The epoch record, or null for a new group. */
    EpochRecord epoch() throws Exception {
        Stat stat = new Stat();
        try {
            byte[] data = client.getData().storingStatIn(stat).forPath(epochPath());
            return EpochRecord.fromJson(data, stat.getVersion());
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
    }

    /**
     * Writes the epoch record if this member still leads and nobody wrote it since {@code expected} was read (null:
     * it did not exist): one ZooKeeper transaction that checks this member's latch node and the record's version.
     *
     * @return the record as written (with its new version), or null when the leadership or the version changed
     */
    EpochRecord writeEpoch(EpochRecord next, EpochRecord expected) throws Exception {
        LeaderLatch l = latch;
        String ours = l == null ? null : l.getOurPath();
        if (ours == null || !l.hasLeadership()) {
            return null;
        }
        CuratorOp check = client.transactionOp().check().forPath(ours);
        CuratorOp write = expected == null
                ? client.transactionOp().create().forPath(epochPath(), next.toJson())
                : client.transactionOp().setData().withVersion(expected.version()).forPath(epochPath(), next.toJson());
        try {
            client.transaction().forOperations(check, write);
        } catch (KeeperException.NoNodeException | KeeperException.BadVersionException | KeeperException.NodeExistsException e) {
            LOG.warn("Not written: the epoch record or this member's leadership changed ({})", e.getMessage());
            return null;
        }
        return next.withVersion(expected == null ? 0 : expected.version() + 1);
    }

    /** Joins the leader latch (controller thread): this member wants to lead. */
    void joinLatch() throws Exception {
        if (latch == null) {
            latch = new LeaderLatch(client, uri.path() + "/leader", name, LeaderLatch.CloseMode.SILENT);
            latch.start();
        }
    }

    /** Leaves the leader latch (controller thread): this member gives up leading or wanting to. */
    void leaveLatch() {
        LeaderLatch l = latch;
        latch = null;
        if (l != null) {
            try {
                l.close();
            } catch (IOException | IllegalStateException e) {
                LOG.debug("Leaving the latch: {}", e.toString());
            }
        }
    }

    boolean inLatch() {
        return latch != null;
    }

    /** True while this member holds the latch and its session is connected. */
    boolean leads() {
        LeaderLatch l = latch;
        return l != null && l.hasLeadership() && isConnected();
    }

    boolean isConnected() {
        return client.getZookeeperClient().isConnected();
    }

    ConnectionState connection() {
        return connection;
    }

    CoordinatorUri uri() {
        return uri;
    }

    /**
     * The session timeout ZooKeeper granted to the current session (within its minSessionTimeout and
     * maxSessionTimeout, by default 2 and 20 ticks), which decides when this member is fenced and when a successor may
     * lead; the one asked for until connected.
     */
    int sessionTimeoutMs() {
        int granted = client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs();
        return granted > 0 ? granted : requestedSessionTimeoutMs;
    }

    /** The session timeout asked for ({@code coordinator-session-timeout-ms}). */
    int requestedSessionTimeoutMs() {
        return requestedSessionTimeoutMs;
    }

    /** Warns when a session is granted another timeout than the one asked for (once per change). */
    private void noticeGrantedTimeout() {
        int granted = client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs();
        if (granted <= 0 || granted == noticedSessionTimeoutMs) {
            return;
        }
        noticedSessionTimeoutMs = granted;
        if (granted != requestedSessionTimeoutMs) {
            LOG.warn("ZooKeeper at {} granted a session timeout of {}, not the {} asked for "
                    + "(coordinator-session-timeout; the ensemble bounds it by its minSessionTimeout and maxSessionTimeout, "
                    + "by default 2 and 20 ticks): this member fences itself about {} after losing ZooKeeper, and a lost "
                    + "primary is replaced no sooner than {} after it was last heard of", uri, Units.millis(granted),
                    Units.millis(requestedSessionTimeoutMs), Units.millis(granted * 2 / 3), Units.millis(granted));
        }
    }

    /** Creates the group's nodes if they are missing (any member may; creating twice is harmless). */
    private void ensureGroup() throws Exception {
        try {
            client.create().creatingParentContainersIfNeeded().forPath(uri.path() + "/members");
        } catch (KeeperException.NodeExistsException e) {
            // created by another member
        }
    }

    private String memberPath(String member) {
        return uri.path() + "/members/" + member;
    }

    private String epochPath() {
        return uri.path() + "/epoch";
    }

    private interface ZkCall<T> {
        T call() throws Exception;
    }

    private static <T> T call(ZkCall<T> c) {
        try {
            return c.call();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("coordinator: " + e.getMessage(), e);
        }
    }

    /** Leaves the latch, removes this member's node and ends the session. */
    @Override
    public void close() {
        leaveLatch();
        if (memberNode != null) {
            try {
                memberNode.close();
            } catch (IOException e) {
                LOG.debug("Removing the member node: {}", e.toString());
            }
        }
        client.close();
    }
}
