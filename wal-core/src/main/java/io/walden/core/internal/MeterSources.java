package io.walden.core.internal;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.walden.core.internal.commit.FlushObserver;
import io.walden.core.internal.metrics.WalMetrics;

/** What a log's meters read (see {@link WalMetrics}), from its parts: so the metrics package never needs {@link Wal}. */
public final class MeterSources implements WalMetrics.Sources {
    private final WalParts parts;

    public MeterSources(WalParts parts) {
        this.parts = parts;
    }

    @Override
    public String logName() {
        return parts.logName();
    }

    @Override
    public long insertLsn() {
        return parts.insert.get();
    }

    @Override
    public long writtenLsn() {
        return parts.written.get();
    }

    @Override
    public long flushedLsn() {
        return parts.flushed.get();
    }

    @Override
    public long oldestLsn() {
        return parts.oldestLsn();
    }

    @Override
    public boolean isClosed() {
        return parts.writes.isClosed();
    }

    @Override
    public boolean isFailed() {
        return parts.commit.failure() != null;
    }

    @Override
    public int segmentCount() {
        return parts.registry.size();
    }

    @Override
    public long retainedBytes() {
        return parts.insert.get() - parts.oldestLsn();
    }

    @Override
    public long oldestRemoteWaitNanos() {
        return parts.remote.oldestWaitNanos();
    }

    @Override
    public void bindParts(MeterRegistry meters, Tags tags) {
        parts.retention.bindTo(meters, tags);
        if (parts.archiver != null) {
            parts.archiver.bindTo(meters, tags);
        }
    }

    @Override
    public long flushCount() {
        return parts.commit.flushCount();
    }

    @Override
    public long recycledSegments() {
        return parts.preparer.recycledCount();
    }

    @Override
    public void flushObserver(FlushObserver observer) {
        parts.commit.observer(observer);
    }
}
