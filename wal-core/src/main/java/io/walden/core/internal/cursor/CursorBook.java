package io.walden.core.internal.cursor;

import io.walden.core.AppendsRefusedException;
import io.walden.core.CursorBackwardsException;
import io.walden.core.Durability;
import io.walden.core.Lsn;
import io.walden.core.UnknownCursorException;
import io.walden.core.WalConfig;
import io.walden.core.WalReader;
import io.walden.core.internal.LogPositions;
import io.walden.core.internal.LogReader;
import io.walden.core.internal.TimeIndex;
import io.walden.core.internal.record.ControlRecord;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The named consumer cursors of a log (what {@link io.walden.core.Cursors} shows applications): their state, their
 * changes as control records, and the parts that keep them in step with the log ({@link CursorReplay}), with
 * truncation ({@link CursorRetention}) and with the meters ({@link CursorLag}). docs/format.md, "Control records".
 *
 * <p>One lock guards the state: this object's monitor, which the calls below take and so do the entry points the log
 * calls on the parts (each is given this object as its {@code lock}), so that a change, a rebuild, a truncation's floor
 * and a gauge's read exclude each other.
 *
 * <p>Thread-safety: every method may be called from any thread; changes are serialised (their durability waits are
 * not).
 */
public final class CursorBook {
    /**
     * One cursor, as {@link io.walden.core.Cursors#list()} shows it.
     *
     * @param lagBytes how far the log's end is past it
     * @param lagSeconds the age of the first record it has not consumed, from that record's time (0 when caught up);
     *                   {@link Double#NaN} when unknown: that record was written without a time (before format 2)
     * @param lost     its LSN was truncated away (beyond {@code maxCursorRetainedBytes})
     */
    public record Entry(String name, long lsn, long lagBytes, double lagSeconds, boolean lost) {
    }

    /**
     * The rest of the log as the cursors call back into it: its readers and its write path, which are made after the
     * cursors (the replication side takes {@link #replay}, and the write path that side). The log's adapter over its
     * parts reads them at each call.
     */
    public interface Log {
        /** A reader from {@code fromLsn} (see {@code Wal#reader}): proves a record boundary, or reads from a cursor. */
        LogReader reader(long fromLsn, WalReader.Visibility visibility);

        /** The log's own reader of its control records from {@code from} to {@code until}, past a replica's read limit. */
        LogReader controlScanner(long from, long until, LogReader.ControlSink sink);

        /** Appends a cursor change's control record; returns its LSN. */
        long appendControl(byte[] record);

        /** Waits until the record at {@code lsn} reached {@code durability}. */
        void awaitDurable(long lsn, Durability durability);

        /** Writes what the WAL buffers hold into the segment files, and forces it. */
        void flush();

        /** Why local appends are refused (a replica: no cursor changes either), or null. */
        String refusal();
    }

    private final Log log;
    private final LogPositions positions;
    /** The log's default durability: a cursor change's, at least LOCAL. */
    private final Durability durability;
    /**
     * What the cursors are. One lock guards it: this object's monitor, which the API below takes and so do the entry
     * points the log calls on the parts below (each is given this object as its {@code lock}), so that a change, a
     * rebuild, a truncation's floor and a gauge's read exclude each other as when they were all methods of this class.
     */
    private final CursorState state = new CursorState();
    /** The cursors' lag in bytes and time, and their meters. */
    public final CursorLag lag;
    /** The cursors kept in step with the log and the cursor files: open, following, promotion, rewind, checkpoint. */
    public final CursorReplay replay;
    /** The cursors' part in truncation, and the cursors it lost. */
    public final CursorRetention retention;
    /** The last control record this log appended: a change that changes nothing still waits for it. */
    private long lastControlLsn = -1;

    /**
     * Calls nothing on {@code log} until {@link #open()}: the log is still being put together.
     *
     * @param times   each record's time (the cursors' lag in time)
     * @param logName the log's name in the meters' {@code log} tag
     * @param dir     where the cursor files are
     */
    public CursorBook(Log log, LogPositions positions, TimeIndex times, WalConfig config, String logName, Path dir) {
        this.log = log;
        this.positions = positions;
        this.durability = config.durability();
        CursorRecords files = new CursorRecords(log, positions, dir);
        this.lag = new CursorLag(positions, times, config.clock(), logName, this, state);
        this.replay = new CursorReplay(positions, dir, this, files, state, lag);
        this.retention = new CursorRetention(positions, config.maxCursorRetainedBytes(), this, files, state, replay, lag.meters);
    }

    // ------------------------------------------------------------------ the application's calls

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
        change(name, lsn, true);
    }

    /**
     * Moves cursor {@code name} forward to {@code lsn}, durably (a commit at the LSN it holds does nothing).
     *
     * @throws UnknownCursorException   when there is no such cursor
     * @throws CursorBackwardsException when {@code lsn} is below its LSN
     * @throws LsnRemovedException, IllegalLsnException, AppendsRefusedException as {@link #create}
     */
    public void commit(String name, long lsn) {
        change(name, lsn, false);
    }

    /**
     * Creates cursor {@code name} at {@code lsn}, or moves it forward there when it exists (the HTTP API's PUT).
     *
     * @throws CursorBackwardsException when it exists at a higher LSN
     * @throws IllegalArgumentException, LsnRemovedException, IllegalLsnException, AppendsRefusedException as {@link #create}
     */
    public void set(String name, long lsn) {
        change(name, lsn, null);
    }

    /**
     * The LSN of cursor {@code name}.
     *
     * @throws IllegalArgumentException for a name no cursor can have (as {@link #checkName}), before anything is looked up
     * @throws UnknownCursorException   when there is none
     */
    public long position(String name) {
        checkName(name);
        Long lsn;
        if (state.live()) {
            lsn = state.published(name); // a primary's: no lock
        } else {
            synchronized (this) {
                replay.catchUp();
                lsn = state.lsns.get(name);
            }
        }
        if (lsn == null) {
            throw new UnknownCursorException(name);
        }
        return lsn;
    }

    /** Every cursor, by name. */
    public synchronized List<Entry> list() {
        replay.catchUp();
        long end = positions.insertLsn();
        long oldest = positions.oldestLsn();
        List<Entry> out = new ArrayList<>(state.lsns.size());
        state.lsns.forEach((name, lsn) -> {
            long seen = lag.endFor(lsn, end);
            out.add(new Entry(name, lsn, Math.max(0, seen - lsn), lag.seconds(lsn, seen), lsn < oldest));
        });
        return out;
    }

    /**
     * Deletes cursor {@code name}, durably; it holds back truncation no more.
     *
     * @return false when there was no such cursor (nothing appended)
     */
    public boolean delete(String name) {
        long recordLsn;
        synchronized (this) {
            ensureChangeable(name);
            if (!state.lsns.containsKey(name)) {
                return false;
            }
            recordLsn = appendChange(ControlRecord.CURSOR_DELETED, name, 0);
            state.lsns.remove(name);
            state.publish();
            retention.deleted(name);
            lag.meters.remove(name);
        }
        log.awaitDurable(recordLsn, level());
        return true;
    }

    /** A reader (flushed records) starting at cursor {@code name}. @throws LsnRemovedException when the cursor is lost */
    public LogReader reader(String name) {
        return log.reader(position(name), WalReader.Visibility.FLUSHED);
    }

    // ------------------------------------------------------------------ changes

    /** @param create true: only a new cursor; false: only an existing one; null: either */
    private void change(String name, long lsn, Boolean create) {
        long recordLsn;
        synchronized (this) {
            ensureChangeable(name);
            Long current = state.lsns.get(name);
            if (Boolean.TRUE.equals(create) && current != null) {
                throw new IllegalArgumentException("cursor '" + name + "' already exists (at " + Lsn.format(current) + ")");
            }
            if (Boolean.FALSE.equals(create) && current == null) {
                throw new UnknownCursorException(name);
            }
            if (lsn != positions.insertLsn() && lsn >= positions.writtenLsn()) {
                log.flush(); // in the WAL buffers still: written, a record boundary can be proven (or refused)
            }
            try (LogReader proof = log.reader(lsn, WalReader.Visibility.WRITTEN)) {
                lsn = proof.position(); // proved kept, not beyond the end, a record boundary; a header's LSN moves past it
            }
            if (current != null && lsn < current) {
                throw new CursorBackwardsException(name, current, lsn);
            }
            if (current != null && lsn == current) {
                recordLsn = lastControlLsn; // already there: answer once that change is as durable as this one would be
            } else {
                recordLsn = applyChange(name, lsn, current);
            }
        }
        if (recordLsn >= 0) {
            log.awaitDurable(recordLsn, level());
        }
    }

    /** Appends the change and applies it (under the lock); returns its control record's LSN. */
    private long applyChange(String name, long lsn, Long current) {
        replay.markUsed(); // before the first control record: from now on, read them at open
        long recordLsn = appendChange(ControlRecord.CURSOR_SET, name, lsn);
        state.lsns.put(name, lsn);
        state.publish();
        retention.committed(name, lsn);
        if (current == null) {
            lag.meters.add(name);
        }
        return recordLsn;
    }

    /** Appends a change's control record (under the lock, before the state changes) and notes it; returns its LSN. */
    private long appendChange(int kind, String name, long lsn) {
        byte[] record = ControlRecord.encode(kind, name, lsn);
        long recordLsn = log.appendControl(record);
        lastControlLsn = recordLsn;
        lag.trailing(recordLsn, record.length);
        state.recent.changed(recordLsn, name, state.lsns.get(name));
        return recordLsn;
    }

    /**
     * Refuses a name no cursor can have, the same way for every use of a name (create, move, read, delete).
     *
     * @throws IllegalArgumentException naming the rule: 1 to 64 of {@code A-Z a-z 0-9 . _ -}
     */
    public static void checkName(String name) {
        if (!ControlRecord.isValidName(name)) {
            throw new IllegalArgumentException("a cursor's name is 1 to 64 letters, digits, '.', '_' or '-', not '" + name + "'");
        }
    }

    private void ensureChangeable(String name) {
        checkName(name);
        String refused = log.refusal();
        if (refused != null) {
            throw new AppendsRefusedException(refused);
        }
        if (!state.live()) {
            throw new AppendsRefusedException("this log is becoming a primary; retry the cursor change");
        }
    }

    /** The log's default durability, at least LOCAL: a committed cursor must survive a crash. */
    private Durability level() {
        return durability == Durability.OFF ? Durability.LOCAL : durability;
    }

    // ------------------------------------------------------------------ the log's calls that span the parts
    // (the others go to the part whose job they are: replay for the replication's, retention for truncation's)

    /** At open, after recovery and before any append: the cursors as of the log's end, and those already lost. */
    public synchronized void open() throws IOException {
        replay.open();
        retention.opened();
    }

    /** The background writer's periodic call: samples the log's end, and keeps the checkpoint file recent. */
    public void tick() {
        lag.sample();
        replay.tick();
    }
}
