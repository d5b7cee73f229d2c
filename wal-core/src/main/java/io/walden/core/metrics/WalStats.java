package io.walden.core.metrics;

import io.walden.core.Durability;

import java.util.concurrent.atomic.LongAdder;

/**
 * The counters the append path bumps: striped {@link LongAdder}s, so that counting allocates nothing and
 * does not make appenders contend on one cache line. Meters read them; the hot path never calls Micrometer.
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public final class WalStats {
    private final LongAdder[] appends = new LongAdder[Durability.values().length];
    private final LongAdder appendBytes = new LongAdder();
    private final LongAdder rolls = new LongAdder();

    public WalStats() {
        for (int i = 0; i < appends.length; i++) {
            appends[i] = new LongAdder();
        }
    }

    public void onAppend(Durability durability, int payloadBytes) {
        appends[durability.ordinal()].increment();
        appendBytes.add(payloadBytes);
    }

    public void onRoll() {
        rolls.increment();
    }

    public long appends(Durability durability) {
        return appends[durability.ordinal()].sum();
    }

    public long appendBytes() {
        return appendBytes.sum();
    }

    public long rolls() {
        return rolls.sum();
    }
}
