package io.walden.server.group;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a member publishes about itself in its ephemeral node ({@code PATH/members/NAME}, docs/operations.md
 * "Replica groups"): where to reach it, what it is doing and how far its log goes. Rewritten whenever one of these
 * changes; gone when its ZooKeeper session ends.
 *
 * @param state      {@link State}
 * @param epoch      the epoch the flushed end of its log {@code default} is in, by that log's history (0 before it has
 *                   a log)
 * @param flushedLsn the end of what its log {@code default} holds durably
 * @param logs       the same of each named log it holds, by name (an older member publishes none: {@code "logs"} is
 *                   absent from its node, read as empty)
 */
public record Member(String name, String http, String replication, State state, int epoch, long flushedLsn,
                     Map<String, LogPosition> logs) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public Member {
        logs = Map.copyOf(logs);
    }

    /** A member holding the log {@code default} alone. */
    Member(String name, String http, String replication, State state, int epoch, long flushedLsn) {
        this(name, http, replication, state, epoch, flushedLsn, Map.of());
    }

    /**
     * Where a named log's flushed end is: which log it is ({@code log_id}: a log deleted and created again under its
     * name is another log), the epoch that end is in by that log's own history, and the end.
     */
    public record LogPosition(long logId, int epoch, long flushedLsn) {
    }

    /** What a member is doing; the election counts only {@link #LOOKING} members' positions as final. */
    public enum State {
        /** Opening its log; not yet a replica or a candidate. */
        STARTING,
        /** Following the primary the epoch record names. */
        REPLICA,
        /**
         * Following no primary (the one named is gone) and receiving nothing: its flushed position is final for
         * this epoch, so an election may compare it.
         */
        LOOKING,
        /** The primary, accepting appends. */
        PRIMARY,
        /** Was the primary, but lost its coordinator session or is handing over: acknowledges nothing. */
        FENCED,
        /**
         * Cannot take part until rebuilt: its log failed, or its primary refused it for good (its history diverged, it
         * holds another log). Never elected, never waited for.
         */
        FAILED;

        String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Where to stream from this member when it is the primary. */
    InetSocketAddress replicationAddress() {
        int colon = replication.lastIndexOf(':');
        return new InetSocketAddress(replication.substring(0, colon), Integer.parseInt(replication.substring(colon + 1)));
    }

    /** host:port others reach a bound address at: a wildcard bind is advertised as this machine's name. */
    static String advertised(InetSocketAddress a) {
        String host = a.getAddress() == null || a.getAddress().isAnyLocalAddress() ? localHost() : a.getAddress().getHostAddress();
        return host + ":" + a.getPort();
    }

    private static String localHost() {
        try {
            return InetAddress.getLocalHost().getCanonicalHostName();
        } catch (UnknownHostException e) {
            return "localhost";
        }
    }

    byte[] toJson() {
        ObjectNode n = JSON.createObjectNode();
        n.put("name", name);
        n.put("http", http);
        n.put("replication", replication);
        n.put("state", state.wireName());
        n.put("epoch", epoch);
        n.put("flushed_lsn", flushedLsn);
        ObjectNode named = n.putObject("logs");
        new TreeMap<>(logs).forEach((log, p) -> named.putObject(log).put("log_id", Long.toHexString(p.logId()))
                .put("epoch", p.epoch()).put("flushed_lsn", p.flushedLsn()));
        try {
            return JSON.writeValueAsBytes(n);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** @throws IllegalArgumentException on bytes that are not a member's JSON */
    static Member fromJson(byte[] bytes) {
        try {
            JsonNode n = JSON.readTree(bytes);
            return new Member(n.get("name").asText(), n.get("http").asText(), n.get("replication").asText(),
                    State.valueOf(n.get("state").asText().toUpperCase(Locale.ROOT)), n.get("epoch").asInt(),
                    n.get("flushed_lsn").asLong(), logsOf(n.get("logs")));
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("not a Walden member record: " + e.getMessage(), e);
        }
    }

    /** The named logs' positions; none when the node has no {@code "logs"} (a member of an older version). */
    private static Map<String, LogPosition> logsOf(JsonNode logs) {
        Map<String, LogPosition> out = new TreeMap<>();
        if (logs == null || logs.isNull()) {
            return out;
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = logs.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode p = e.getValue();
            out.put(e.getKey(), new LogPosition(Long.parseUnsignedLong(p.get("log_id").asText(), 16),
                    p.get("epoch").asInt(), p.get("flushed_lsn").asLong()));
        }
        return out;
    }
}
