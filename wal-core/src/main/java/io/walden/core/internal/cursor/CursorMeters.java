package io.walden.core.internal.cursor;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.ToDoubleFunction;

/**
 * The cursors' meters in every registry the log was bound to: {@code walden.cursor.lag.bytes} and
 * {@code walden.cursor.lag.seconds} per cursor (tag {@code cursor}, added and removed with the cursor), and the counter
 * {@code walden.cursor.lost}, each with the tags the log's other meters carry ({@code log}).
 *
 * <p>Thread-safety: any thread; gauges are added and removed under this object's lock.
 */
public final class CursorMeters {
    private final ToDoubleFunction<String> lagBytes;
    private final ToDoubleFunction<String> lagSeconds;
    /** Each registry the log was bound to, with the log's tags there. */
    private final List<Bound> registries = new CopyOnWriteArrayList<>();
    private final List<Counter> lost = new CopyOnWriteArrayList<>();
    private final Map<String, List<Meter>> gauges = new HashMap<>();

    public CursorMeters(ToDoubleFunction<String> lagBytes, ToDoubleFunction<String> lagSeconds) {
        this.lagBytes = lagBytes;
        this.lagSeconds = lagSeconds;
    }

    private record Bound(MeterRegistry registry, Tags tags) {
    }

    public synchronized void bindTo(MeterRegistry registry, Tags tags, Collection<String> cursors) {
        Bound bound = new Bound(registry, tags);
        registries.add(bound);
        lost.add(Counter.builder("walden.cursor.lost").tags(tags)
                .description("Cursors lost: truncation removed their LSN (they lagged beyond maxCursorRetainedBytes)")
                .register(registry));
        cursors.forEach(name -> add(bound, name));
    }

    /** A new cursor: its gauges in every registry. */
    public synchronized void add(String name) {
        registries.forEach(bound -> add(bound, name));
    }

    private void add(Bound bound, String name) {
        List<Meter> meters = gauges.computeIfAbsent(name, k -> new ArrayList<>());
        meters.add(Gauge.builder("walden.cursor.lag.bytes", name, lagBytes).tags(bound.tags).tag("cursor", name)
                .baseUnit("bytes").description("How far the log's end is past the cursor").register(bound.registry));
        meters.add(Gauge.builder("walden.cursor.lag.seconds", name, lagSeconds).tags(bound.tags).tag("cursor", name)
                .baseUnit("seconds").description("The age of the first record the cursor has not consumed, from its time;"
                        + " NaN when unknown (a record written before format 2)")
                .register(bound.registry));
    }

    /** A deleted cursor: its gauges go. */
    public synchronized void remove(String name) {
        List<Meter> meters = gauges.remove(name);
        if (meters != null) {
            for (Meter m : meters) {
                registries.forEach(bound -> bound.registry.remove(m));
            }
        }
    }

    /** A cursor was lost. */
    public void lost() {
        lost.forEach(Counter::increment);
    }
}
