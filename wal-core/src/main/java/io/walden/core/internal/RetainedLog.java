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
    public long floor(Retention.Holder holder) {
        return switch (holder) {
            case REPLICATION_SLOT -> parts.replication.retentionFloor();
            case CURSOR -> parts.cursors.retention.floor();
            case ARCHIVE -> parts.archiveFloor.forTruncation();
        };
    }

    @Override
    public void truncateBefore(long lsn) {
        parts.truncateBefore(lsn);
    }
}
