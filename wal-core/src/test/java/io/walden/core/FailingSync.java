package io.walden.core;

import io.walden.core.internal.sync.ForceTarget;
import io.walden.core.internal.sync.SyncStrategy;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The real fdatasync strategy with a switch that makes the next forces fail, as a dying disk's EIO would,
 * and a record of how far completed forces reached.
 */
final class FailingSync implements SyncStrategy {
    private final SyncStrategy real = SyncStrategy.of(SyncMethod.FDATASYNC);
    volatile boolean failing;
    /** Throws this Error from the next force instead (what a fault in mapped memory surfaces as: an InternalError). */
    volatile Error error;
    final AtomicLong forces = new AtomicLong();
    final AtomicLong forcedUpTo = new AtomicLong();

    @Override
    public void force(ForceTarget segment, long fromOffset, long toOffset) throws IOException {
        Error e = error;
        if (e != null) {
            throw e;
        }
        if (failing) {
            throw new IOException("Input/output error (injected)");
        }
        real.force(segment, fromOffset, toOffset);
        forces.incrementAndGet();
        forcedUpTo.accumulateAndGet(segment.startLsn() + toOffset, Math::max);
    }
}
