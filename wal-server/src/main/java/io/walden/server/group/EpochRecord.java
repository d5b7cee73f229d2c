package io.walden.server.group;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;

/**
 * The group's epoch record ({@code PATH/epoch}): which member is primary and in which epoch of the log's history.
 * Only the holder of the group's leadership writes it, with a versioned write in one transaction with a check of its
 * leadership node, and before it accepts appends in that epoch: the record names at most one primary per epoch, and
 * a member that finds a newer epoch than its own knows it is no longer primary (docs/operations.md, "Replica groups").
 *
 * @param epoch        the epoch number, as in the primary's {@code walden.history}
 * @param primary      the primary's member name
 * @param startLsn     where the epoch begins in the log
 * @param handoverTo   during a switchover: the member the primary hands leadership to, else null
 * @param handoverLsn  during a switchover: the log's end when the primary stopped appending (the target holds it)
 * @param version      ZooKeeper's version of the node when read (-1 for a record not yet written)
 */
public record EpochRecord(int epoch, String primary, long startLsn, String handoverTo, long handoverLsn, int version) {
    private static final ObjectMapper JSON = new ObjectMapper();

    EpochRecord withVersion(int newVersion) {
        return new EpochRecord(epoch, primary, startLsn, handoverTo, handoverLsn, newVersion);
    }

    byte[] toJson() {
        ObjectNode n = JSON.createObjectNode();
        n.put("epoch", epoch);
        n.put("primary", primary);
        n.put("start_lsn", startLsn);
        if (handoverTo != null) {
            n.put("handover_to", handoverTo);
            n.put("handover_lsn", handoverLsn);
        }
        try {
            return JSON.writeValueAsBytes(n);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** @throws IllegalArgumentException on bytes that are not an epoch record */
    static EpochRecord fromJson(byte[] bytes, int version) {
        try {
            JsonNode n = JSON.readTree(bytes);
            JsonNode to = n.get("handover_to");
            return new EpochRecord(n.get("epoch").asInt(), n.get("primary").asText(), n.get("start_lsn").asLong(),
                    to == null || to.isNull() ? null : to.asText(), to == null ? 0 : n.get("handover_lsn").asLong(), version);
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("not a Walden epoch record: " + e.getMessage(), e);
        }
    }
}
