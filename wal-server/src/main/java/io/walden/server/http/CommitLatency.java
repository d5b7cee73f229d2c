package io.walden.server.http;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.walden.core.Durability;
import io.walden.core.internal.metrics.LatencyBuckets;

import java.util.concurrent.TimeUnit;

/**
 * {@code walden.commit.latency}: how long the sidecar's appends took to reach their durability level, from the append
 * to the moment the log told it (the answer follows on the connection's event loop), per level ({@code durability}
 * tag), as a Prometheus histogram so that instances and windows add up. Batches count once, by their last record.
 *
 * <p>Thread-safety: {@link #record} from any thread (the one that made the level hold).
 */
final class CommitLatency {
    private final Timer[] byLevel = new Timer[Durability.values().length];

    CommitLatency(MeterRegistry registry) {
        for (Durability d : Durability.values()) {
            byLevel[d.ordinal()] = Timer.builder("walden.commit.latency")
                    .description("Time from an HTTP append to its durability level holding")
                    .tag("durability", d.configName()).serviceLevelObjectives(LatencyBuckets.COMMIT).register(registry);
        }
    }

    /** An append at {@code level} begun at {@code startNanos} ({@link System#nanoTime()}) reached it now. */
    void record(Durability level, long startNanos) {
        byLevel[level.ordinal()].record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
    }
}
