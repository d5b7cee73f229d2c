package io.walden.core.internal;

import io.walden.core.internal.commit.Completion;

import java.util.function.LongConsumer;
import java.util.function.Supplier;

/**
 * The log as its replication side calls back into it ({@link WalReplication.Log}): the write path's open state and
 * flush, the oldest record, and what the log forgets after a rewind. The write path is made after the replication
 * side (it admits appends by its refusal), so it is read at each call.
 */
final class ReplicationLog implements WalReplication.Log {
    /** The log's write path, made after the replication side: read at each call. */
    private final Supplier<WritePath> writes;
    private final LogPositions positions;
    /** What the rest of the log forgets after a rewind (WalParts#rewound: readers, the archive floor, the archiver). */
    private final LongConsumer rewound;

    ReplicationLog(Supplier<WritePath> writes, LogPositions positions, LongConsumer rewound) {
        this.writes = writes;
        this.positions = positions;
        this.rewound = rewound;
    }

    @Override
    public void ensureOpen() {
        writes.get().ensureOpen();
    }

    @Override
    public boolean isClosed() {
        return writes.get().isClosed();
    }

    @Override
    public long oldestLsn() {
        return positions.oldestLsn();
    }

    @Override
    public void flush() {
        writes.get().flush();
    }

    @Override
    public void flushAsync(Completion completion) {
        writes.get().flushAsync(completion);
    }

    @Override
    public void rewound(long lsn) {
        rewound.accept(lsn);
    }
}
