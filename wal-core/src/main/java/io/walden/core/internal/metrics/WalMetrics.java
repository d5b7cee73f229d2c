package io.walden.core.internal.metrics;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.walden.core.Durability;
import io.walden.core.internal.commit.FlushObserver;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * Binds a log's ({@link io.walden.core.Wal}'s) meters to a Micrometer registry. The names are a contract; Prometheus renders them
 * as shown in brackets:
 *
 * <ul>
 *   <li>{@code walden.appends} counter, tag {@code durability} ({@code walden_appends_total})</li>
 *   <li>{@code walden.append.bytes} counter, payload bytes ({@code walden_append_bytes_total})</li>
 *   <li>{@code walden.flushes} counter ({@code walden_flushes_total})</li>
 *   <li>{@code walden.flush.duration} timer with p50/p99/p99.9 ({@code walden_flush_duration_seconds})</li>
 *   <li>{@code walden.commits.per.flush} distribution summary ({@code walden_commits_per_flush})</li>
 *   <li>their histograms, {@code walden.flush.latency} and {@code walden.flush.commits}
 *       ({@code walden_flush_latency_seconds_bucket}, {@code walden_flush_commits_bucket})</li>
 *   <li>{@code walden.lsn} gauge, tag {@code position} = insert/written/flushed/oldest ({@code walden_lsn})</li>
 *   <li>{@code walden.segments} gauge; {@code walden.segment.rolls} and {@code walden.segment.recycles} counters</li>
 *   <li>{@code walden.retained.bytes} gauge; {@code walden.failed} gauge (1 once a force failed)</li>
 *   <li>{@code walden.remote.wait.oldest} gauge, seconds: the oldest commit waiting for the synchronous replicas</li>
 * </ul>
 *
 * Every meter carries the tag {@code log} (the directory name) so that several logs can share a registry.
 * Counters and gauges read the log's own striped counters when scraped; the flush timer and the summary are
 * recorded by the flush leader once per flush (not per append), through Micrometer's allocation-free paths.
 *
 * <p>Thread-safety: {@link #bindTo} may be called for several registries, from any thread.
 */
public final class WalMetrics implements MeterBinder {
    private final WalStats stats;
    private final Sources sources;
    private volatile FlushObserver[] observers = new FlushObserver[0];

    /** What the meters read beyond {@link WalStats}: the log's view for its meters (it implements this). */
    public interface Sources {
        /** The {@code log} tag: the directory's name. */
        String logName();

        long flushCount();

        long recycledSegments();

        void flushObserver(FlushObserver observer);

        long insertLsn();

        long writtenLsn();

        long flushedLsn();

        long oldestLsn();

        boolean isClosed();

        boolean isFailed();

        int segmentCount();

        long retainedBytes();

        /** How long the oldest commit waiting for the synchronous replicas has waited, in nanoseconds (0: none). */
        long oldestRemoteWaitNanos();

        /** Binds the meters of optional parts (the archiver) with the same tags. */
        void bindParts(MeterRegistry registry, Tags tags);
    }

    public WalMetrics(WalStats stats, Sources sources) {
        this.stats = stats;
        this.sources = sources;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Tags tags = Tags.of("log", sources.logName());
        for (Durability d : Durability.values()) {
            FunctionCounter.builder("walden.appends", stats, s -> s.appends(d))
                    .description("Records appended")
                    .tags(tags).tag("durability", d.configName()).register(registry);
        }
        FunctionCounter.builder("walden.append.bytes", stats, WalStats::appendBytes)
                .description("Payload bytes appended").baseUnit("bytes").tags(tags).register(registry);
        FunctionCounter.builder("walden.flushes", sources, Sources::flushCount)
                .description("Forces of the log (each serves a group of commits)").tags(tags).register(registry);
        FunctionCounter.builder("walden.segment.rolls", stats, WalStats::rolls)
                .description("Times the log moved to a new segment").tags(tags).register(registry);
        FunctionCounter.builder("walden.segment.recycles", sources, Sources::recycledSegments)
                .description("Segments prepared by recycling a truncated one").tags(tags).register(registry);
        gauge(registry, tags, "insert", Sources::insertLsn);
        gauge(registry, tags, "written", Sources::writtenLsn);
        gauge(registry, tags, "flushed", Sources::flushedLsn);
        gauge(registry, tags, "oldest", w -> w.isClosed() ? Double.NaN : w.oldestLsn());
        Gauge.builder("walden.segments", sources, Sources::segmentCount).description("Live segment files").tags(tags).register(registry);
        Gauge.builder("walden.retained.bytes", sources, w -> w.isClosed() ? Double.NaN : w.retainedBytes())
                .description("Bytes kept from the oldest record to the insert position").baseUnit("bytes").tags(tags).register(registry);
        Gauge.builder("walden.failed", sources, w -> w.isFailed() ? 1 : 0)
                .description("1 once a force failed (appends refused until reopen)").tags(tags).register(registry);
        Gauge.builder("walden.remote.wait.oldest", sources, w -> w.oldestRemoteWaitNanos() / 1e9)
                .description("How long the oldest commit at a remote level has waited for the synchronous replicas (0: none waits)")
                .baseUnit("seconds").tags(tags).register(registry);
        sources.bindParts(registry, tags);

        Timer flushTimer = Timer.builder("walden.flush.duration").description("Time one force of the log took")
                .publishPercentiles(0.5, 0.99, 0.999).distributionStatisticExpiry(Duration.ofMinutes(1))
                .tags(tags).register(registry);
        DistributionSummary perFlush = DistributionSummary.builder("walden.commits.per.flush")
                .description("Durable commits served by one force (group commit)")
                .publishPercentiles(0.5, 0.99).distributionStatisticExpiry(Duration.ofMinutes(1))
                .tags(tags).register(registry);
        // The same two as histograms: buckets add up across instances and over any window (Prometheus'
        // histogram_quantile), the percentiles above do not. Names of their own: Prometheus text cannot hold a
        // family's quantiles and its buckets at once, and the summaries' names are a contract.
        Timer flushLatency = Timer.builder("walden.flush.latency").description("Time one force of the log took")
                .serviceLevelObjectives(LatencyBuckets.FLUSH).tags(tags).register(registry);
        DistributionSummary flushCommits = DistributionSummary.builder("walden.flush.commits")
                .description("Durable commits served by one force (group commit)")
                .serviceLevelObjectives(LatencyBuckets.COMMITS_PER_FLUSH).tags(tags).register(registry);
        addObserver((nanos, bytes, commits) -> {
            flushTimer.record(nanos, TimeUnit.NANOSECONDS);
            perFlush.record(commits);
            flushLatency.record(nanos, TimeUnit.NANOSECONDS);
            flushCommits.record(commits);
        });
    }

    private void gauge(MeterRegistry registry, Tags tags, String position, ToDoubleFunction<Sources> f) {
        Gauge.builder("walden.lsn", sources, f).description("Log position (LSN) as a byte offset")
                .tags(tags).tag("position", position).register(registry);
    }

    private synchronized void addObserver(FlushObserver o) {
        FlushObserver[] next = Arrays.copyOf(observers, observers.length + 1);
        next[next.length - 1] = o;
        observers = next;
        if (next.length == 1) {
            sources.flushObserver(this::onFlush);
        }
    }

    private void onFlush(long nanos, long bytes, long commits) {
        for (FlushObserver o : observers) {
            o.onFlush(nanos, bytes, commits);
        }
    }
}
