package io.walden.core.internal;

import io.walden.core.internal.retention.Retention;
import io.walden.core.internal.segment.SegmentRegistry;

/** The log as retention sees it ({@link Retention.Log}): its segments, positions, holders and truncation. */
final class RetainedLog implements Retention.Log {
    private final WalParts parts;

    RetainedLog(WalParts parts) {
        this.parts = parts;
    }

    @Override
    public SegmentRegistry registry() {
        return parts.registry;
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
    public void truncate(Retention.Decision decide) {
        parts.truncate(decide);
    }
}
