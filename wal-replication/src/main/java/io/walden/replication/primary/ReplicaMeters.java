package io.walden.replication.primary;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.walden.core.internal.metrics.LatencyBuckets;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

/**
 * Meters per connected replica (PostgreSQL's pg_stat_replication as meters): {@code walden.replica.lsn} gauges tagged
 * {@code replica} and {@code position} = write/flush/apply, and {@code walden.replica.lag} timers with the same tags
 * (time from sending a position until the replica reported it; Prometheus histograms, so that they aggregate). Registered while a replica is connected, removed when
 * it goes, so that meters do not pile up with names.
 *
 * <p>Thread-safety: every method from any thread.
 */
final class ReplicaMeters {
    private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>();

    /** Binds to a registry: the replicas connected now, and every later one. */
    MeterBinder binder(Collection<ReplicaState> connected) {
        return registry -> {
            registries.add(registry);
            connected.forEach(state -> gauges(registry, state));
        };
    }

    void connected(ReplicaState state) {
        for (MeterRegistry registry : registries) {
            gauges(registry, state);
        }
    }

    /**
     * At each status: the lags it measured, each sent position once per level. A report that moved nothing (an idle,
     * caught-up replica answering a keepalive) records nothing: its lag is not growing, there is none.
     */
    void reported(ReplicaState state) {
        for (MeterRegistry registry : registries) {
            lag(registry, state.name, "write", state.measuredWrite);
            lag(registry, state.name, "flush", state.measuredFlush);
            lag(registry, state.name, "apply", state.measuredApply);
        }
    }

    void disconnected(String replica) {
        for (MeterRegistry registry : registries) {
            for (String name : new String[] {"walden.replica.lsn", "walden.replica.lag", "walden.replica.waiting"}) {
                for (Meter m : registry.find(name).tag("replica", replica).meters()) {
                    registry.remove(m);
                }
            }
        }
    }

    private static void gauges(MeterRegistry registry, ReplicaState state) {
        Gauge.builder("walden.replica.lsn", state, s -> s.written).tags("replica", state.name, "position", "write").register(registry);
        Gauge.builder("walden.replica.lsn", state, s -> s.flushed).tags("replica", state.name, "position", "flush").register(registry);
        Gauge.builder("walden.replica.lsn", state, s -> s.applied).tags("replica", state.name, "position", "apply").register(registry);
        waiting(registry, state, "write", s -> s.written);
        waiting(registry, state, "flush", s -> s.flushed);
        waiting(registry, state, "apply", s -> s.applied);
    }

    /**
     * {@code walden.replica.waiting}: how long the oldest position sent to the replica and not reported at that level has
     * waited, now (0 when it has everything sent): a replica stuck in a force or in its applier reports nothing, so
     * the lag timers record nothing for it, and this grows.
     */
    private static void waiting(MeterRegistry registry, ReplicaState state, String position,
                                ToLongFunction<ReplicaState> reported) {
        Gauge.builder("walden.replica.waiting", state, s -> s.waitingMillis(reported.applyAsLong(s), System.nanoTime()) / 1000.0)
                .description("How long the oldest position sent and not reported at this level has waited")
                .baseUnit("seconds").tags("replica", state.name, "position", position).register(registry);
    }

    private static void lag(MeterRegistry registry, String replica, String position, long millis) {
        if (millis >= 0) {
            Timer.builder("walden.replica.lag").tags("replica", replica, "position", position)
                    .description("Time from sending a position until the replica reported it")
                    .serviceLevelObjectives(LatencyBuckets.COMMIT).register(registry)
                    .record(millis, TimeUnit.MILLISECONDS);
        }
    }
}
