package io.walden.server.cluster;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The settings a cluster's log was created with ({@code POST /v1/logs}), kept in ZooKeeper beside its leadership record
 * ({@code <base>/logs/<log>/settings}, a JSON object of per-log setting names to texts; docs/cluster.md), because the
 * server that first leads the log is chosen by Helix after the request was answered elsewhere. Only that first creation
 * reads them: its replicas take the primary's settings from its stream, and a change ({@code PATCH}) is made at the
 * primary, so the node is not kept up to date after the creation. {@link LogLeadership#delete} removes it with the
 * log's other nodes.
 *
 * <p>Thread-safety: any thread; each method is one ZooKeeper round trip.
 */
public final class ClusterLogSettings {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final CuratorFramework client;
    private final String base;

    /** @param base the cluster's Walden node, as {@link LogLeadership}'s */
    public ClusterLogSettings(CuratorFramework client, String base) {
        this.client = client;
        this.base = base;
    }

    private String path(String log) {
        return base + "/logs/" + log + "/settings";
    }

    /** Keeps {@code settings} as log {@code log}'s creation settings, replacing any left by an earlier creation. */
    public void write(String log, Map<String, String> settings) throws Exception {
        byte[] bytes = JSON.writeValueAsBytes(settings);
        try {
            client.create().creatingParentContainersIfNeeded().forPath(path(log), bytes);
        } catch (KeeperException.NodeExistsException e) {
            client.setData().forPath(path(log), bytes);
        }
    }

    /** Log {@code log}'s creation settings; empty when it was created without any (or before they were kept). */
    public Map<String, String> read(String log) throws Exception {
        try {
            return JSON.readValue(client.getData().forPath(path(log)), new TypeReference<LinkedHashMap<String, String>>() { });
        } catch (KeeperException.NoNodeException e) {
            return Map.of();
        }
    }
}
