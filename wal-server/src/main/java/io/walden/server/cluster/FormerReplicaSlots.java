package io.walden.server.cluster;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Drops, on each log led here, the replication slot of a server that no longer holds a copy of it (docs/cluster.md,
 * "Replication slots in a cluster"). A replica's slot keeps the primary's segments from its position on, so that it can
 * resume where it stopped; once Helix moved that copy elsewhere (a drain, a rebalance, a server lost and replaced), the
 * slot would pin the log's oldest segments until {@code max-slot-retained-bytes} let them go. A slot goes when its
 * server has been out of the log's placement (where Helix has a copy of it now or is taking one) and not streaming it
 * for {@link #GRACE_MILLIS}: long enough that a copy placed a moment ago, which this server's view of the placement may
 * not show yet, is not mistaken for a former one.
 *
 * <p>Thread-safety: {@link #check} from one thread at a time (the in-sync keeper's).
 */
final class FormerReplicaSlots {
    private static final Logger LOG = LoggerFactory.getLogger(FormerReplicaSlots.class);
    static final long GRACE_MILLIS = 10_000;

    private final PlacedLogs logs;
    private final Function<String, Optional<Set<String>>> placedOn;
    private final long graceNanos;
    /** By log, by slot: since when its server has been out of the log's placement. */
    private final Map<String, Map<String, Long>> outSince = new HashMap<>();

    /**
     * @param placedOn the servers holding or getting a copy of a log, by Helix's placement as this server last read it;
     *                 empty when it does not know the log (then no slot of it is dropped)
     */
    FormerReplicaSlots(PlacedLogs logs, Function<String, Optional<Set<String>>> placedOn, long graceMillis) {
        this.logs = logs;
        this.placedOn = placedOn;
        this.graceNanos = graceMillis * 1_000_000L;
    }

    /** One look at the slots of every log led here. */
    void check() {
        long now = System.nanoTime();
        Set<String> led = logs.led().keySet();
        outSince.keySet().retainAll(led);
        for (String log : led) {
            Optional<Set<String>> placed = placedOn.apply(log);
            if (placed.isEmpty()) {
                continue;
            }
            Map<String, Long> out = outSince.computeIfAbsent(log, l -> new HashMap<>());
            Set<String> slots = logs.endpoint().slots(log).keySet();
            out.keySet().retainAll(slots);
            Set<String> streaming = new HashSet<>();
            logs.endpoint().replicaStatus(log).forEach(r -> streaming.add(r.name()));
            for (String server : slots) {
                if (placed.get().contains(server) || streaming.contains(server)) {
                    out.remove(server);
                } else if (now - out.computeIfAbsent(server, s -> now) >= graceNanos) {
                    drop(log, server);
                    out.remove(server);
                }
            }
        }
    }

    private void drop(String log, String server) {
        try {
            if (logs.endpoint().dropSlot(log, server)) {
                LOG.info("Log {}: dropped the replication slot of {}, which holds no copy of it any more", log, server);
            }
        } catch (IllegalStateException connectedMeanwhile) {
            // it follows the log again: its slot stays
        }
    }
}
