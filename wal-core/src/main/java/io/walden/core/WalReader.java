package io.walden.core;

import io.walden.core.internal.LogReader;

import java.util.concurrent.TimeUnit;

/**
 * Reads records in LSN order, from a starting LSN, concurrently with appenders and other readers. Obtained from
 * {@link Wal#reader} or {@link Cursors#reader}.
 *
 * <p>Every record is validated (length, prev link, CRC-32C) before it is returned, so a reader never
 * hands out corrupt bytes. A reader holds the segment it is positioned in, so truncation cannot unmap it
 * underneath; reading below {@link Wal#oldestLsn()} throws {@link LsnRemovedException}.
 *
 * <p>Thread-safety: a reader is used by one thread at a time (create one per consumer thread).
 */
public final class WalReader implements AutoCloseable {

    /** Which records a reader may see. */
    public enum Visibility {
        /** Records once written to the mapped log, before they are forced: the lowest latency, but a crash of
         *  the machine may take away a record that was read (PostgreSQL's non-durable reads). */
        WRITTEN,
        /** Only records that a completed force covered: nothing read can be lost in a crash. The default. */
        FLUSHED
    }

    private final LogReader reader;

    WalReader(LogReader reader) {
        this.reader = reader;
    }

    /** The LSN of the next record this reader will return (or wait for). */
    public long position() {
        return reader.position();
    }

    public Visibility visibility() {
        return reader.visibility();
    }

    /**
     * The next visible record, or null when the reader is at the current end.
     *
     * @throws LsnRemovedException   when the reader's position was truncated away
     * @throws WalCorruptedException when a record fails validation (the position is left on it)
     */
    public WalRecord next() {
        return reader.next();
    }

    /**
     * The next visible record, waiting up to {@code timeout} for one to appear.
     *
     * @return the record, or null when none appeared in time (or the log was closed meanwhile)
     */
    public WalRecord poll(long timeout, TimeUnit unit) throws InterruptedException {
        return reader.poll(timeout, unit);
    }

    @Override
    public void close() {
        reader.close();
    }
}
