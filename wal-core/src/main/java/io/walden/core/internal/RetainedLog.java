package io.walden.core.internal;

import io.walden.core.internal.retention.Retention;
import io.walden.core.internal.segment.SegmentRegistry;

import java.util.function.Consumer;

/** The log as retention sees it ({@link Retention.Log}): its segments, positions, holders and truncation. */
final class RetainedLog implements Retention.Log {
    private final SegmentRegistry registry;
    private final LogPositions positions;
    /** The log's truncation, which spans its parts (WalParts#truncate). */
    private final Consumer<Retention.Decision> truncation;

    RetainedLog(SegmentRegistry registry, LogPositions positions, Consumer<Retention.Decision> truncation) {
        this.registry = registry;
        this.positions = positions;
        this.truncation = truncation;
    }

    @Override
    public SegmentRegistry registry() {
        return registry;
    }

    @Override
    public long insertLsn() {
        return positions.insertLsn();
    }

    @Override
    public long writtenLsn() {
        return positions.writtenLsn();
    }

    @Override
    public void truncate(Retention.Decision decide) {
        truncation.accept(decide);
    }
}
