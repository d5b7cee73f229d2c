package io.walden.core;

import io.walden.core.archive.ArchivedLog;

import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;

/** The view of a {@link Wal} its {@link io.walden.core.archive.Archiver} gets: what it reads, and the one switch it holds. */
final class ArchivedWal implements ArchivedLog {
    private final Wal wal;
    private final Consumer<String> blocker;

    ArchivedWal(Wal wal, Consumer<String> blocker) {
        this.wal = wal;
        this.blocker = blocker;
    }

    @Override
    public Path directory() {
        return wal.directory();
    }

    @Override
    public long segmentSize() {
        return wal.config().segmentSize();
    }

    @Override
    public List<SegmentInfo> segments() {
        return wal.segments();
    }

    @Override
    public long flushedLsn() {
        return wal.flushedLsn();
    }

    @Override
    public boolean acceptsAppends() {
        return wal.appendsRefusedReason() == null;
    }

    @Override
    public long epochStartLsn() {
        return wal.history().current().startLsn();
    }

    @Override
    public void blockAppends(String reason) {
        blocker.accept(reason);
    }
}
