package io.walden.core;

import io.walden.core.internal.cursor.CursorBook;

import java.util.ArrayList;
import java.util.List;

/**
 * Named consumer cursors (PostgreSQL's logical replication slots, Kafka's committed offsets): a name and an LSN that
 * says "this consumer has processed everything before it". Obtained from {@link Wal#cursors()}.
 *
 * <p><b>Durable and replicated.</b> Every change is a control record in the log (docs/format.md, "Control records"),
 * appended at the log's default durability (at least {@link Durability#LOCAL}), so a committed cursor survives a
 * crash and reaches the replicas with the records around it; after a failover the promoted replica knows it. The
 * cursor files ({@code walden.cursors}, {@code walden.cursors.checkpoint}) only spare reading the log at open.
 *
 * <p><b>Retention.</b> A cursor holds back {@link Wal#truncateBefore} at its LSN, as a replication slot does, while it
 * lags the log's end by at most {@link WalConfig#maxCursorRetainedBytes()}; beyond that truncation may pass it, and a
 * cursor whose LSN was removed is <em>lost</em>: its reader throws {@link LsnRemovedException}, the event is logged
 * and counted ({@code walden.cursor.lost}). Committing a kept LSN makes it whole again. A forgotten consumer never
 * fills the disk.
 *
 * <p><b>On a replica</b> cursors can be read, not changed (the changes are appends: {@link AppendsRefusedException}),
 * and show what the primary had flushed, like the replica's readers.
 *
 * <p>Thread-safety: every method may be called from any thread; changes are serialised (their durability waits are
 * not).
 */
public final class Cursors {
    /**
     * One cursor.
     *
     * @param lagBytes how far the log's end is past it
     * @param lagSeconds the age of the first record it has not consumed, from that record's time (0 when caught up);
     *                   {@link Double#NaN} when unknown: that record was written without a time (before format 2)
     * @param lost     its LSN was truncated away (beyond {@code maxCursorRetainedBytes})
     */
    public record Cursor(String name, long lsn, long lagBytes, double lagSeconds, boolean lost) {
    }

    private final CursorBook book;

    Cursors(CursorBook book) {
        this.book = book;
    }

    /**
     * Creates cursor {@code name} at {@code lsn} (a record boundary: an append's LSN, a record's {@code nextLsn()},
     * {@link Wal#oldestLsn()} or {@link Wal#insertLsn()}), durably.
     *
     * @throws IllegalArgumentException for a name outside 1 to 64 of {@code A-Z a-z 0-9 . _ -}, or when it exists
     * @throws LsnRemovedException      when {@code lsn} is below the oldest record
     * @throws IllegalLsnException      when {@code lsn} is beyond the end or not a record boundary
     * @throws AppendsRefusedException  on a replica
     */
    public void create(String name, long lsn) {
        book.create(name, lsn);
    }

    /**
     * Moves cursor {@code name} forward to {@code lsn}, durably (a commit at the LSN it holds does nothing).
     *
     * @throws UnknownCursorException   when there is no such cursor
     * @throws CursorBackwardsException when {@code lsn} is below its LSN
     * @throws LsnRemovedException, IllegalLsnException, AppendsRefusedException as {@link #create}
     */
    public void commit(String name, long lsn) {
        book.commit(name, lsn);
    }

    /**
     * Creates cursor {@code name} at {@code lsn}, or moves it forward there when it exists (the HTTP API's PUT).
     *
     * @throws CursorBackwardsException when it exists at a higher LSN
     * @throws IllegalArgumentException, LsnRemovedException, IllegalLsnException, AppendsRefusedException as {@link #create}
     */
    public void set(String name, long lsn) {
        book.set(name, lsn);
    }

    /**
     * The LSN of cursor {@code name}.
     *
     * @throws IllegalArgumentException for a name no cursor can have ({@link #checkName})
     * @throws UnknownCursorException   when there is none
     */
    public long position(String name) {
        return book.position(name);
    }

    /**
     * Refuses a name no cursor can have, as every method here does before it looks anything up: 1 to 64 of
     * {@code A-Z a-z 0-9 . _ -}.
     *
     * @throws IllegalArgumentException naming the rule and the name
     */
    public static void checkName(String name) {
        CursorBook.checkName(name);
    }

    /** Every cursor, by name. */
    public List<Cursor> list() {
        List<CursorBook.Entry> entries = book.list();
        List<Cursor> out = new ArrayList<>(entries.size());
        for (CursorBook.Entry e : entries) {
            out.add(new Cursor(e.name(), e.lsn(), e.lagBytes(), e.lagSeconds(), e.lost()));
        }
        return out;
    }

    /**
     * Deletes cursor {@code name}, durably; it holds back truncation no more.
     *
     * @return false when there was no such cursor (nothing appended)
     */
    public boolean delete(String name) {
        return book.delete(name);
    }

    /** A reader (flushed records) starting at cursor {@code name}. @throws LsnRemovedException when the cursor is lost */
    public WalReader reader(String name) {
        return new WalReader(book.reader(name));
    }
}
