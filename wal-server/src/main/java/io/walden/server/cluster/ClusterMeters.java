package io.walden.server.cluster;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * What this server's part of the cluster did, as meters (docs/operations.md, "Meters"; docs/cluster.md): the copies
 * placed here by role, the moves away from here, and the failovers taken here. Counted on Helix's message threads as
 * each transition's data work ends; the gauges read {@link PlacedLogs}'s maps.
 *
 * <ul>
 *   <li>{@code walden.cluster.placements{role=replica}}: copies placed on this server (Helix's OFFLINE→SLAVE: a new
 *       log, a new or moved replica, or a copy back after a restart); {@code {role=primary}}: primaries taken up here
 *       (SLAVE→MASTER).</li>
 *   <li>{@code walden.cluster.moves{kind=handover}}: primaries handed over from here in a planned move (MASTER→SLAVE:
 *       balance, a drain); {@code {kind=drop}}: copies removed from here (OFFLINE→DROPPED: moved elsewhere, or the log
 *       deleted).</li>
 *   <li>{@code walden.cluster.failovers}: primaries taken up here from a primary that did not hand the log over (its
 *       server died, was cut off, or restarted).</li>
 *   <li>{@code walden.cluster.logs{role=primary|replica}}: the logs led and followed here now.</li>
 * </ul>
 *
 * <p>Thread-safety: any thread.
 */
public final class ClusterMeters {
    private final Counter replicaPlacements;
    private final Counter primaryPlacements;
    private final Counter handovers;
    private final Counter drops;
    private final Counter failovers;

    public ClusterMeters(MeterRegistry registry, PlacedLogs placed) {
        replicaPlacements = placements(registry, "replica");
        primaryPlacements = placements(registry, "primary");
        handovers = moves(registry, "handover");
        drops = moves(registry, "drop");
        failovers = Counter.builder("walden.cluster.failovers").baseUnit("logs")
                .description("Primaries taken up on this server from a primary that did not hand the log over")
                .register(registry);
        Gauge.builder("walden.cluster.logs", placed, p -> p.ledCount()).tag("role", "primary").baseUnit("logs")
                .description("The cluster's logs this server leads now").register(registry);
        Gauge.builder("walden.cluster.logs", placed, p -> p.followedCount()).tag("role", "replica").baseUnit("logs")
                .description("The cluster's logs this server follows now").register(registry);
    }

    private static Counter placements(MeterRegistry registry, String role) {
        return Counter.builder("walden.cluster.placements").tag("role", role).baseUnit("logs")
                .description("Copies of the cluster's logs placed on this server (replica), or led by it (primary)")
                .register(registry);
    }

    private static Counter moves(MeterRegistry registry, String kind) {
        return Counter.builder("walden.cluster.moves").tag("kind", kind).baseUnit("logs")
                .description("Primaries handed over from this server (handover), copies removed from it (drop)")
                .register(registry);
    }

    void placedReplica() {
        replicaPlacements.increment();
    }

    void led(PlacedLogs.Led led) {
        primaryPlacements.increment();
        if (led.failover()) {
            failovers.increment();
        }
    }

    void handedOver() {
        handovers.increment();
    }

    void dropped() {
        drops.increment();
    }
}
