package io.walden.core.internal;

/**
 * The log as its replication side calls back into it ({@link WalReplication.Log}): the write path's open state and
 * flush, the oldest record, and what the log forgets after a rewind. Reads the parts at each call, so the replication
 * side can be made before the write path that admits appends by its refusal.
 */
final class ReplicationLog implements WalReplication.Log {
    private final WalParts parts;

    ReplicationLog(WalParts parts) {
        this.parts = parts;
    }

    @Override
    public void ensureOpen() {
        parts.writes.ensureOpen();
    }

    @Override
    public boolean isClosed() {
        return parts.writes.isClosed();
    }

    @Override
    public long oldestLsn() {
        return parts.oldestLsn();
    }

    @Override
    public void flush() {
        parts.writes.flush();
    }

    @Override
    public void rewound(long lsn) {
        parts.rewound(lsn);
    }
}
