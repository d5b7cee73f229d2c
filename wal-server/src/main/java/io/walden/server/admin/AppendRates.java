package io.walden.server.admin;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Each log's appends per second over the last sampling interval ({@link #SAMPLE_SECONDS}), from its
 * {@code walden.appends} counters (every durability level): what {@code GET /v1/logs} shows as {@code append_rate}.
 * Sampled by the server's timer, not per request, so that listing 1,000 logs reads 1,000 numbers.
 *
 * <p>Thread-safety: {@link #sample} on one thread at a time (the timer); {@link #rate} from any thread.
 */
public final class AppendRates {
    /** How often the rates are sampled. */
    public static final int SAMPLE_SECONDS = 10;

    private record Sample(long nanos, double appends, double perSecond) {
    }

    private final MeterRegistry registry;
    private final Map<String, Sample> last = new ConcurrentHashMap<>();

    public AppendRates(MeterRegistry registry) {
        this.registry = registry;
    }

    /**
     * Samples every {@link #SAMPLE_SECONDS} on {@code worker} (which may read the registry at length), as
     * {@code timer} says when; once the worker refuses (the server stops), the samples end quietly.
     */
    public void scheduleOn(ScheduledExecutorService timer, Executor worker) {
        timer.scheduleAtFixedRate(() -> {
            try {
                worker.execute(this::sample);
            } catch (RejectedExecutionException stopping) {
                // the server stops: its timer stops with it
            }
        }, 0, SAMPLE_SECONDS, TimeUnit.SECONDS);
    }

    /** Takes every log's count now: its rate is what it appended since the last sample. */
    public void sample() {
        long now = System.nanoTime();
        Map<String, Double> counts = new HashMap<>();
        for (FunctionCounter c : registry.find("walden.appends").functionCounters()) {
            String log = c.getId().getTag("log");
            if (log != null) {
                counts.merge(log, c.count(), Double::sum);
            }
        }
        last.keySet().retainAll(counts.keySet()); // a deleted log's rate goes with it
        counts.forEach((log, appends) -> last.compute(log, (k, before) -> {
            if (before == null || appends < before.appends()) { // first sight, or the log reopened (counts anew)
                return new Sample(now, appends, 0);
            }
            double seconds = (now - before.nanos()) / 1e9;
            return new Sample(now, appends, seconds <= 0 ? before.perSecond() : (appends - before.appends()) / seconds);
        }));
    }

    /** Log {@code name}'s appends per second over the last interval; 0 before its second sample. */
    public double rate(String name) {
        Sample s = last.get(name);
        return s == null ? 0 : s.perSecond();
    }
}
