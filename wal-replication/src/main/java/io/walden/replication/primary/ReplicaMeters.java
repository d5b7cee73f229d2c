package io.walden.replication.primary;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.walden.core.internal.metrics.LatencyBuckets;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

/**
 * Meters of the connected replicas (PostgreSQL's pg_stat_replication as meters):
 * <ul>
 *   <li>{@code walden.replica.lsn} and {@code walden.replica.waiting} gauges per log a replica streams, tagged
 *       {@code log}, {@code replica} and {@code position} = write/flush/apply: every log's, {@code default}'s
 *       included, as every other per-log meter carries its log's name. Six series per log and replica.</li>
 *   <li>{@code walden.replica.lag} timers per replica, tagged {@code replica} and {@code position}, over every log it
 *       streams (time from sending a position until the replica reported it; Prometheus histograms, so that they
 *       aggregate): about 20 series each, so per log they would be some 60 series a log and replica, 120,000 on a
 *       primary of a thousand logs and two replicas. A log's own lag is its gauges' gap to the log's flushed
 *       position.</li>
 * </ul>
 * Registered while a replica streams the log (the lag timers while it streams any), removed when it goes or the log
 * does, so that meters do not pile up with names.
 *
 * <p>A log deleted and created again under its name may have its new stream of a replica registered before its old
 * one is closed: the gauges belong to the stream that registered them last ({@link #owners}), and an older stream's
 * close removes nothing of the newer one's.
 *
 * <p>Thread-safety: every method from any thread; the owners and the streams per replica under this object's monitor.
 */
final class ReplicaMeters {
    private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>();
    /** Per (log, replica): the stream state whose gauges are registered. */
    private final Map<List<String>, ReplicaState> owners = new HashMap<>();
    /** Per replica: how many of its log streams are open (its lag timers go when none is). */
    private final Map<String, Integer> streams = new HashMap<>();

    /** Binds to a registry: the replicas streaming each log now ({@code log} name → its replicas), and every later one. */
    MeterBinder binder(Map<String, Collection<ReplicaState>> connected) {
        return registry -> {
            registries.add(registry);
            synchronized (this) {
                connected.forEach((log, states) -> states.forEach(state -> {
                    if (owners.get(List.of(log, state.name)) == state) {
                        gauges(registry, log, state);
                    }
                }));
            }
        };
    }

    synchronized void connected(String log, ReplicaState state) {
        ReplicaState before = owners.put(List.of(log, state.name), state);
        if (before != null) {
            removeGauges(log, state.name); // an older stream of the log still closing: its gauges read its state
        } else {
            streams.merge(state.name, 1, Integer::sum);
        }
        for (MeterRegistry registry : registries) {
            gauges(registry, log, state);
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

    /** The stream of {@code state} on {@code log} closed: its gauges go (unless a newer stream's replaced them). */
    synchronized void disconnected(String log, ReplicaState state) {
        if (!owners.remove(List.of(log, state.name), state)) {
            return; // a newer stream of the log owns the meters now
        }
        removeGauges(log, state.name);
        if (streams.merge(state.name, -1, Integer::sum) <= 0) {
            streams.remove(state.name);
            for (MeterRegistry registry : registries) {
                remove(registry, registry.find("walden.replica.lag").tag("replica", state.name).meters());
            }
        }
    }

    private void removeGauges(String log, String replica) {
        for (MeterRegistry registry : registries) {
            for (String name : new String[] {"walden.replica.lsn", "walden.replica.waiting"}) {
                remove(registry, registry.find(name).tag("log", log).tag("replica", replica).meters());
            }
        }
    }

    private static void remove(MeterRegistry registry, Collection<Meter> meters) {
        for (Meter m : new ArrayList<>(meters)) {
            registry.remove(m);
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

    private static void lag(MeterRegistry registry, String replica, String position, long millis) {
        if (millis >= 0) {
            Timer.builder("walden.replica.lag").tags("replica", replica, "position", position)
                    .description("Time from sending a position until the replica reported it, over every log it streams")
                    .serviceLevelObjectives(LatencyBuckets.COMMIT).register(registry)
                    .record(millis, TimeUnit.MILLISECONDS);
        }
    }
}
