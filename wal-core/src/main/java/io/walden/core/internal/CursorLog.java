package io.walden.core.internal;

import io.walden.core.Durability;
import io.walden.core.WalReader;
import io.walden.core.internal.cursor.CursorBook;

import java.util.function.Supplier;

/**
 * The log as its cursors call back into it ({@link CursorBook.Log}): its readers, its write path (the control records
 * and their durability) and its role. All three are made after the cursors (the replication side takes their replay,
 * the write path takes that side, the readers take the write path), so each is read at each call.
 */
final class CursorLog implements CursorBook.Log {
    private final Supplier<ReadPath> reads;
    private final Supplier<WritePath> writes;
    private final Supplier<WalReplication> replication;

    CursorLog(Supplier<ReadPath> reads, Supplier<WritePath> writes, Supplier<WalReplication> replication) {
        this.reads = reads;
        this.writes = writes;
        this.replication = replication;
    }

    @Override
    public LogReader reader(long fromLsn, WalReader.Visibility visibility) {
        return reads.get().reader(fromLsn, visibility);
    }

    @Override
    public LogReader controlScanner(long from, long until, LogReader.ControlSink sink) {
        return reads.get().controlScanner(from, until, sink);
    }

    @Override
    public long appendControl(byte[] record) {
        return writes.get().appendControl(record);
    }

    @Override
    public void awaitDurable(long lsn, Durability durability) {
        writes.get().awaitDurable(lsn, durability);
    }

    @Override
    public void flush() {
        writes.get().flush();
    }

    @Override
    public String refusal() {
        return replication.get().refusal();
    }
}
