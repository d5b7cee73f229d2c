package io.walden.server.cluster;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.helix.ConfigAccessor;
import org.apache.helix.HelixAdmin;
import org.apache.helix.HelixException;
import org.apache.helix.api.config.StateTransitionThrottleConfig;
import org.apache.helix.api.config.StateTransitionThrottleConfig.RebalanceType;
import org.apache.helix.api.config.StateTransitionThrottleConfig.ThrottleScope;
import org.apache.helix.manager.zk.ZKHelixAdmin;
import org.apache.helix.manager.zk.ZKUtil;
import org.apache.helix.model.BuiltInStateModelDefinitions;
import org.apache.helix.model.ClusterConfig;
import org.apache.helix.model.ClusterConfig.GlobalRebalancePreferenceKey;
import org.apache.helix.model.HelixConfigScope.ConfigScopeProperty;
import org.apache.helix.model.InstanceConfig;
import org.apache.helix.model.builder.HelixConfigScopeBuilder;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Creates the Helix cluster on first use and registers a server in it. Several servers may start at once, and Helix's
 * admin calls do not expect that: {@code addCluster} creates the cluster's root node first and its children after (a
 * second server that sees the root treats the cluster as made), and {@code addInstance} fails to enable a server
 * while another server's config is half-written. So both run under a ZooKeeper lock ({@code <cluster>.setup}, beside
 * the cluster's node): a server that gets the lock after another made the cluster finds it complete.
 *
 * <p>What the creator writes into {@code ClusterConfig} (docs/cluster.md, "Placement by Apache Helix"): the WAGED
 * capacity (one key, {@value #CAPACITY_KEY}: every replica weighs 1, a server holds {@code logsPerServer}), synchronous
 * global rebalancing, the move throttle, and the persisted best-possible assignment that {@link ClusterLogs} reads
 * as each log's target.
 */
final class ClusterSetup {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterSetup.class);
    /** The one WAGED capacity dimension: log replicas. */
    static final String CAPACITY_KEY = "LOGS";
    static final String STATE_MODEL = BuiltInStateModelDefinitions.MasterSlave.name();
    static final String HTTP_ADDRESS = "WALDEN_HTTP_ADDRESS";
    static final String REPLICATION_ADDRESS = "WALDEN_REPLICATION_ADDRESS";

    private ClusterSetup() {
    }

    /** Makes sure the cluster exists and holds {@code self} with its current addresses. Idempotent; safe at once. */
    static void prepare(ClusterAddress address, ServerInfo self, ClusterSettings settings, Duration timeout) throws Exception {
        try (CuratorFramework zk = CuratorFrameworkFactory.builder()
                .connectString(address.connectString())
                .sessionTimeoutMs((int) settings.sessionTimeout().toMillis())
                .connectionTimeoutMs((int) Math.min(timeout.toMillis(), 15_000))
                .retryPolicy(new ExponentialBackoffRetry(100, 10, 1000))
                .build()) {
            zk.start();
            if (!zk.blockUntilConnected((int) timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("cluster " + address + ": ZooKeeper not reached within " + timeout);
            }
            createChroot(zk, address);
            InterProcessMutex lock = new InterProcessMutex(zk, address.clusterPath() + ".setup");
            if (!lock.acquire(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("cluster " + address + ": the setup lock was not free within " + timeout);
            }
            try {
                if (zk.checkExists().forPath(address.clusterPath()) == null) {
                    createCluster(address, settings);
                } else if (!ZKUtil.isClusterSetup(address.clusterName(), address.helixZkAddress())) {
                    throw new IllegalStateException("cluster " + address + ": its node exists but is not a whole Helix"
                            + " cluster (a creation cut short, or another program's node); remove it or repair it");
                }
                // under the lock too: Helix's addInstance reads every other instance's config, and one being written
                // at that moment makes it register the new instance as UNKNOWN (never assigned anything)
                HelixAdmin admin = new ZKHelixAdmin.Builder().setZkAddress(address.helixZkAddress()).build();
                try {
                    register(admin, address.clusterName(), self);
                    if (settings.serverCapacity() != ClusterSettings.CLUSTER_DEFAULT) {
                        setCapacity(address, self.name(), settings.serverCapacity());
                    }
                } finally {
                    admin.close();
                }
            } finally {
                lock.release();
            }
        }
    }

    private static void createChroot(CuratorFramework zk, ClusterAddress address) throws Exception {
        if (!address.chroot().isEmpty() && zk.checkExists().forPath(address.chroot()) == null) {
            try {
                // persistent, not a container: ZooKeeper would remove an empty container before Helix fills it
                zk.create().creatingParentsIfNeeded().forPath(address.chroot());
            } catch (KeeperException.NodeExistsException raced) {
                // another server made it first
            }
        }
    }

    /** Under the setup lock, when the cluster's node does not exist. */
    private static void createCluster(ClusterAddress address, ClusterSettings settings) {
        String name = address.clusterName();
        HelixAdmin admin = new ZKHelixAdmin.Builder().setZkAddress(address.helixZkAddress()).build();
        ConfigAccessor configs = new ConfigAccessor.Builder().setZkAddress(address.helixZkAddress()).build();
        try {
            if (!admin.addCluster(name, false)) {
                throw new IllegalStateException("cluster " + address + ": Helix could not create it (see its log)");
            }
            admin.addStateModelDef(name, STATE_MODEL, BuiltInStateModelDefinitions.MasterSlave.getStateModelDefinition());
            configs.setClusterConfig(name, clusterConfig(configs.getClusterConfig(name), settings));
            LOG.info("cluster {} created: {} moves per server, {} logs per server", address,
                    settings.movesPerServer(), settings.logsPerServer());
        } finally {
            configs.close();
            admin.close();
        }
    }

    static ClusterConfig clusterConfig(ClusterConfig config, ClusterSettings settings) {
        config.setInstanceCapacityKeys(List.of(CAPACITY_KEY));
        config.setDefaultInstanceCapacityMap(Map.of(CAPACITY_KEY, settings.logsPerServer()));
        config.setDefaultPartitionWeightMap(Map.of(CAPACITY_KEY, 1));
        config.setGlobalRebalancePreference(Map.of(
                GlobalRebalancePreferenceKey.EVENNESS, 1,
                GlobalRebalancePreferenceKey.LESS_MOVEMENT, 1));
        // the baseline is computed in the pipeline that needs it, not on a thread after: a log added or a server joined
        // is placed by the next pipeline run, and the placement does not change again when a late baseline lands
        config.setGlobalRebalanceAsyncMode(false);
        config.setPersistBestPossibleAssignment(true);
        config.setStateTransitionThrottleConfigs(List.of(new StateTransitionThrottleConfig(
                RebalanceType.LOAD_BALANCE, ThrottleScope.INSTANCE, settings.movesPerServer())));
        return config;
    }

    /**
     * Writes server {@code name}'s own capacity into its instance config (merged: its other fields stay), which WAGED
     * places against in place of the cluster's default. At every join, so that a server restarted with another
     * {@code max-logs} is held to it from then on.
     */
    private static void setCapacity(ClusterAddress address, String name, int copies) {
        ConfigAccessor configs = new ConfigAccessor.Builder().setZkAddress(address.helixZkAddress()).build();
        try {
            InstanceConfig delta = new InstanceConfig(name);
            delta.setInstanceCapacityMap(Map.of(CAPACITY_KEY, copies));
            configs.updateInstanceConfig(address.clusterName(), name, delta);
        } finally {
            configs.close();
        }
    }

    /**
     * Adds the server, or refreshes the addresses of one that was here before (same name, maybe new addresses). Helix's
     * own host and port fields stay as Helix derives them from the name (it refuses to change them afterwards); the
     * addresses are Walden's fields, and a server that was here before has only those written: Helix's
     * {@code setInstanceConfig} compares the host and port fields, which it leaves unset for a name that is not
     * {@code HOST_PORT}, and threw a NullPointerException (a server killed and started again under its name did not
     * start).
     */
    static void register(HelixAdmin admin, String cluster, ServerInfo self) {
        Map<String, String> addresses = Map.of(HTTP_ADDRESS, self.httpAddress(), REPLICATION_ADDRESS, self.replicationAddress());
        if (!admin.getInstancesInCluster(cluster).contains(self.name())) {
            InstanceConfig config = new InstanceConfig(self.name());
            addresses.forEach(config.getRecord()::setSimpleField);
            config.setInstanceEnabled(true);
            try {
                admin.addInstance(cluster, config);
                return;
            } catch (HelixException raced) {
                // the same name registered by an earlier start of this server that we did not see: refresh it
            }
        }
        admin.setConfig(new HelixConfigScopeBuilder(ConfigScopeProperty.PARTICIPANT).forCluster(cluster)
                .forParticipant(self.name()).build(), addresses);
    }
}
