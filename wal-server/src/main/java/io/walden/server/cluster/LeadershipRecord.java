package io.walden.server.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.util.Collections;
import java.util.Set;
import java.util.TreeSet;

/**
 * One log's leadership record in a cluster (docs/cluster.md, "Who may lead a log"): which server is the log's primary,
 * in which epoch, and which servers are <em>in sync</em>: hold every record the primary acknowledged at {@code on} or
 * above. Only an in-sync server may become the log's primary, and the primary waits at {@code on} for every in-sync
 * server, so whichever of them leads next holds every acknowledged record.
 *
 * @param epoch   the log's epoch, as in its {@code walden.history} (0 for a record not yet written)
 * @param primary the primary's server name ({@code --name}); null for a record not yet written
 * @param inSync      the in-sync servers, the primary among them, sorted
 * @param steppedDown whether the primary stepped down in a planned hand-over (Helix's MASTER→SLAVE): the next primary
 *                    takes over without a failover
 * @param version     ZooKeeper's version of the node when read (-1 for a record not yet written)
 */
public record LeadershipRecord(int epoch, String primary, Set<String> inSync, boolean steppedDown, int version) {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The record of a log no server has led yet. */
    static final LeadershipRecord NONE = new LeadershipRecord(0, null, Set.of(), false, -1);

    public LeadershipRecord {
        inSync = Collections.unmodifiableSortedSet(new TreeSet<>(inSync));
    }

    /** Whether server {@code name} holds every acknowledged record, and so may lead. */
    public boolean isInSync(String name) {
        return inSync.contains(name);
    }

    /** Whether nothing was written yet. */
    public boolean isNone() {
        return primary == null;
    }

    byte[] toJson() {
        ObjectNode n = JSON.createObjectNode();
        n.put("epoch", epoch);
        n.put("primary", primary);
        ArrayNode servers = n.putArray("in_sync");
        new TreeSet<>(inSync).forEach(servers::add);
        n.put("stepped_down", steppedDown);
        try {
            return JSON.writeValueAsBytes(n);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** @throws IllegalArgumentException on bytes that are not a leadership record */
    static LeadershipRecord fromJson(byte[] bytes, int version) {
        try {
            JsonNode n = JSON.readTree(bytes);
            Set<String> inSync = new TreeSet<>();
            n.get("in_sync").forEach(s -> inSync.add(s.asText()));
            return new LeadershipRecord(n.get("epoch").asInt(), n.get("primary").asText(), inSync,
                    n.path("stepped_down").asBoolean(false), version);
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("not a Walden leadership record: " + e.getMessage(), e);
        }
    }
}
