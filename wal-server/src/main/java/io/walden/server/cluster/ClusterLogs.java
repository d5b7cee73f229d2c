package io.walden.server.cluster;

import org.apache.helix.HelixAdmin;
import org.apache.helix.HelixConstants;
import org.apache.helix.HelixDataAccessor;
import org.apache.helix.HelixException;
import org.apache.helix.HelixManager;
import org.apache.helix.PropertyKey;
import org.apache.helix.constants.InstanceConstants;
import org.apache.helix.controller.rebalancer.waged.WagedRebalancer;
import org.apache.helix.model.ExternalView;
import org.apache.helix.model.IdealState;
import org.apache.helix.model.InstanceConfig;
import org.apache.helix.model.LiveInstance;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The cluster's logs, through Helix: each log is a Helix resource of one partition ({@code <log>_0}) under the
 * MasterSlave state model, placed by the WAGED rebalancer in FULL_AUTO mode (docs/cluster.md says why). Any server
 * may call these; Helix's controller (on whichever server leads) acts on them in its next pipeline run.
 *
 * <p>Thread-safety: every method may be called from any thread; each is one or a few ZooKeeper reads or writes.
 */
public final class ClusterLogs {
    /** The copies a log gets when nothing else is asked: 3, or as many as there are live servers when fewer. */
    public static final int DEFAULT_REPLICAS = 3;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]+");

    private final String cluster;
    private final HelixManager manager;

    ClusterLogs(String cluster, HelixManager manager) {
        this.cluster = cluster;
        this.manager = manager;
    }

    /**
     * Adds {@code log} with {@code replicas} copies (the primary included). Helix places at most one copy per live
     * server, so a log asked for 3 copies in a cluster of 2 live servers gets 2, and its third when a third server joins.
     *
     * @return false when the log was already there (its replica count unchanged: see {@link #setReplicas})
     */
    public boolean add(String log, int replicas) {
        checkName(log);
        checkReplicas(replicas);
        IdealState ideal = new IdealState(log);
        ideal.setStateModelDefRef(ClusterSetup.STATE_MODEL);
        ideal.setStateModelFactoryName(HelixConstants.DEFAULT_STATE_MODEL_FACTORY);
        ideal.setRebalanceMode(IdealState.RebalanceMode.FULL_AUTO);
        ideal.setRebalancerClassName(WagedRebalancer.class.getName());
        ideal.setNumPartitions(1);
        ideal.setReplicas(Integer.toString(replicas));
        // in FULL_AUTO the partitions are the keys of the list fields; Helix fills the lists (and, persisted, the maps)
        ideal.getRecord().setListField(partition(log), new ArrayList<>());
        ideal.getRecord().setMapField(partition(log), new HashMap<>());
        try {
            admin().addResource(cluster, log, ideal);
            return true;
        } catch (HelixException exists) {
            if (names().contains(log)) {
                return false;
            }
            throw exists;
        }
    }

    /**
     * Changes the number of copies of {@code log}. Helix adds a copy (a new REPLICA) before it removes any, and moves the
     * primary to a replica first when the primary's copy is the one to go.
     *
     * @return false when there is no such log
     */
    public boolean setReplicas(String log, int replicas) {
        checkReplicas(replicas);
        if (!names().contains(log)) {
            return false;
        }
        // compare-and-set on the ideal state's node: the controller writes the same node (the persisted assignment)
        return accessor().updateProperty(keys().idealStates(log), record -> {
            if (record != null) {
                record.setSimpleField(IdealState.IdealStateProperty.REPLICAS.name(), Integer.toString(replicas));
            }
            return record;
        }, new IdealState(log));
    }

    /**
     * Writes {@code log}'s ideal state again, changed only in a counter of nudges: the controller runs its pipeline on
     * the change. Helix leaves a log unplaced when its first computation fails (seen when a log is added as a server
     * joins: "the calculated best possible states ... is empty or invalid") until some other change arrives; a
     * creation nudges until a server leads the log. Harmless on a placed log: the same computation again.
     *
     * @return false when there is no such log
     */
    public boolean nudge(String log) {
        if (!names().contains(log)) {
            return false;
        }
        return accessor().updateProperty(keys().idealStates(log), record -> {
            if (record != null) {
                record.setLongField(NUDGES, record.getLongField(NUDGES, 0) + 1);
            }
            return record;
        }, new IdealState(log));
    }

    /**
     * Resets {@code server}'s copy of {@code log} from ERROR (Helix's {@code resetPartition}: ERROR → OFFLINE, then
     * placed again as Helix decides; {@link ErrorCopies}).
     *
     * @throws org.apache.helix.HelixException when the copy is not in ERROR, the server not live, or the log gone
     */
    public void reset(String log, String server) {
        admin().resetPartition(cluster, server, log, List.of(partition(log)));
    }

    /** The ideal state's field counting {@link #nudge}s: Helix ignores fields it does not know. */
    private static final String NUDGES = "WALDEN_NUDGES";

    /**
     * Removes {@code log} from the cluster: Helix steps its primary down and takes every copy OFFLINE, then DROPPED
     * ({@link LogRoles#drop}).
     *
     * @return false when there was no such log
     */
    public boolean remove(String log) {
        if (!names().contains(log)) {
            return false;
        }
        admin().dropResource(cluster, log);
        return true;
    }

    /** The cluster's logs, by name. */
    public List<String> names() {
        List<String> names = new ArrayList<>(accessor().getChildNames(keys().idealStates()));
        names.sort(null);
        return names;
    }

    /** Where {@code log} is now and where Helix is taking it; empty when there is no such log. */
    public Optional<Placement> placement(String log) {
        IdealState ideal = accessor().getProperty(keys().idealStates(log));
        if (ideal == null) {
            return Optional.empty();
        }
        ExternalView view = accessor().getProperty(keys().externalView(log));
        return Optional.of(placement(log, ideal, view));
    }

    /**
     * Every log's placement, by log name, from two batched reads (every ideal state, every external view); a log
     * removed while they read is left out.
     */
    public Map<String, Placement> placements() {
        HelixDataAccessor accessor = accessor();
        Map<String, ExternalView> views = new HashMap<>();
        for (ExternalView view : accessor.<ExternalView>getChildValues(keys().externalViews(), false)) {
            views.put(view.getResourceName(), view);
        }
        Map<String, Placement> placements = new TreeMap<>();
        for (IdealState ideal : accessor.<IdealState>getChildValues(keys().idealStates(), false)) {
            String log = ideal.getResourceName();
            placements.put(log, placement(log, ideal, views.get(log)));
        }
        return placements;
    }

    private static Placement placement(String log, IdealState ideal, ExternalView view) {
        Map<String, String> target = ideal.getInstanceStateMap(partition(log));
        Map<String, String> current = view == null ? null : view.getStateMap(partition(log));
        return new Placement(log, ideal.getReplicaCount(0), roles(current), roles(target));
    }

    private static Map<String, Role> roles(Map<String, String> states) {
        Map<String, Role> roles = new HashMap<>();
        if (states != null) {
            states.forEach((server, state) -> {
                if (!"DROPPED".equals(state)) {
                    roles.put(server, Role.ofHelixState(state));
                }
            });
        }
        return roles;
    }

    /** Every known server, whether live, and its primaries, replicas and errors now (from the external views). */
    public ClusterSummary summary() {
        HelixDataAccessor accessor = accessor();
        Set<String> live = new HashSet<>(accessor.getChildNames(keys().liveInstances()));
        Map<String, int[]> counts = new HashMap<>();
        List<ExternalView> views = accessor.getChildValues(keys().externalViews(), false);
        for (ExternalView view : views) {
            for (String partition : view.getPartitionSet()) {
                view.getStateMap(partition).forEach((server, state) ->
                        counts.computeIfAbsent(server, s -> new int[Role.values().length])[Role.ofHelixState(state).ordinal()]++);
            }
        }
        List<ClusterSummary.Server> servers = new ArrayList<>();
        List<InstanceConfig> configs = accessor.getChildValues(keys().instanceConfigs(), false);
        for (InstanceConfig config : configs) {
            String name = config.getInstanceName();
            int[] c = counts.getOrDefault(name, new int[Role.values().length]);
            servers.add(new ClusterSummary.Server(name, live.contains(name),
                    config.getRecord().getSimpleField(ClusterSetup.HTTP_ADDRESS),
                    config.getRecord().getSimpleField(ClusterSetup.REPLICATION_ADDRESS),
                    c[Role.PRIMARY.ordinal()], c[Role.REPLICA.ordinal()], c[Role.ERROR.ordinal()],
                    config.getInstanceOperation().getOperation() == InstanceConstants.InstanceOperation.EVACUATE));
        }
        servers.sort((a, b) -> a.name().compareTo(b.name()));
        LiveInstance leader = accessor.getProperty(keys().controllerLeader());
        return new ClusterSummary(cluster, leader == null ? null : leader.getInstanceName(), names().size(), servers);
    }

    static String partition(String log) {
        return log + "_0";
    }

    private HelixAdmin admin() {
        return manager.getClusterManagmentTool();
    }

    private HelixDataAccessor accessor() {
        return manager.getHelixDataAccessor();
    }

    private PropertyKey.Builder keys() {
        return accessor().keyBuilder();
    }

    private static void checkName(String log) {
        if (log == null || !NAME.matcher(log).matches()) {
            throw new IllegalArgumentException("log name '" + log + "': letters, digits, '_', '.' and '-' only");
        }
    }

    private static void checkReplicas(int replicas) {
        if (replicas < 1) {
            throw new IllegalArgumentException("replicas " + replicas + ": at least 1 (the primary)");
        }
    }
}
