package io.walden.replication.primary;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.walden.core.internal.metrics.LatencyBuckets;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

/**
 * Meters per connected replica of each log (PostgreSQL's pg_stat_replication as meters): {@code walden.replica.lsn}
 * gauges tagged {@code log}, {@code replica} and {@code position} = write/flush/apply, and {@code walden.replica.lag}
 * timers with the same tags (time from sending a position until the replica reported it; Prometheus histograms, so
 * that they aggregate). Every log's, {@code default}'s included, as every other per-log meter carries its log's name.
 * Registered while a replica streams the log, removed when it goes (or the log does), so that meters do not pile up
 * with names.
 *
 * <p>Thread-safety: every method from any thread.
 */
final class ReplicaMeters {
    private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>();

    /** Binds to a registry: the replicas streaming each log now ({@code log} name → its replicas), and every later one. */
    MeterBinder binder(Map<String, Collection<ReplicaState>> connected) {
        return registry -> {
            registries.add(registry);
            connected.forEach((log, states) -> states.forEach(state -> gauges(registry, log, state)));
        };
    }

    void connected(String log, ReplicaState state) {
        for (MeterRegistry registry : registries) {
            gauges(registry, log, state);
        }
    }

    /**
     * At each status: the lags it measured, each sent position once per level. A report that moved nothing (an idle,
     * caught-up replica answering a keepalive) records nothing: its lag is not growing, there is none.
     */
    void reported(String log, ReplicaState state) {
        for (MeterRegistry registry : registries) {
            lag(registry, log, state.name, "write", state.measuredWrite);
            lag(registry, log, state.name, "flush", state.measuredFlush);
            lag(registry, log, state.name, "apply", state.measuredApply);
        }
    }

    void disconnected(String log, String replica) {
        for (MeterRegistry registry : registries) {
            for (String name : new String[] {"walden.replica.lsn", "walden.replica.lag", "walden.replica.waiting"}) {
                for (Meter m : registry.find(name).tag("log", log).tag("replica", replica).meters()) {
                    registry.remove(m);
                }
            }
        }
    }

    private static void gauges(MeterRegistry registry, String log, ReplicaState state) {
        Tags tags = Tags.of("log", log, "replica", state.name);
        Gauge.builder("walden.replica.lsn", state, s -> s.written).tags(tags).tag("position", "write").register(registry);
        Gauge.builder("walden.replica.lsn", state, s -> s.flushed).tags(tags).tag("position", "flush").register(registry);
        Gauge.builder("walden.replica.lsn", state, s -> s.applied).tags(tags).tag("position", "apply").register(registry);
        waiting(registry, tags, state, "write", s -> s.written);
        waiting(registry, tags, state, "flush", s -> s.flushed);
        waiting(registry, tags, state, "apply", s -> s.applied);
    }

    /**
     * {@code walden.replica.waiting}: how long the oldest position sent to the replica and not reported at that level has
     * waited, now (0 when it has everything sent): a replica stuck in a force or in its applier reports nothing, so
     * the lag timers record nothing for it, and this grows.
     */
    private static void waiting(MeterRegistry registry, Tags tags, ReplicaState state, String position,
                                ToLongFunction<ReplicaState> reported) {
        Gauge.builder("walden.replica.waiting", state, s -> s.waitingMillis(reported.applyAsLong(s), System.nanoTime()) / 1000.0)
                .description("How long the oldest position sent and not reported at this level has waited")
                .baseUnit("seconds").tags(tags).tag("position", position).register(registry);
    }

    private static void lag(MeterRegistry registry, String log, String replica, String position, long millis) {
        if (millis >= 0) {
            Timer.builder("walden.replica.lag").tags("log", log, "replica", replica, "position", position)
                    .description("Time from sending a position until the replica reported it")
                    .serviceLevelObjectives(LatencyBuckets.COMMIT).register(registry)
                    .record(millis, TimeUnit.MILLISECONDS);
        }
    }
}
