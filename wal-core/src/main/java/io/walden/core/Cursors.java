package io.walden.core;

import io.micrometer.core.instrument.binder.MeterBinder;
import io.walden.core.record.ControlRecord;
import io.walden.core.recovery.CursorFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

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
    private static final Logger LOG = LoggerFactory.getLogger(Cursors.class);

    /**
     * One cursor.
     *
     * @param lagBytes how far the log's end is past it
     * @param lagSeconds how long ago the log's end passed it (about 1 s resolution; 0 when caught up)
     * @param lost     its LSN was truncated away (beyond {@code maxCursorRetainedBytes})
     */
    public record Cursor(String name, long lsn, long lagBytes, double lagSeconds, boolean lost) {
    }

    /** When the log's end passed which LSN: the cursors' lag in time. */
    private final EndClock clock = new EndClock();
    /** The run of control records this log appended last, [start, end): a cursor committed to the log's end lags 0. */
    private long trailingControlStart = -1;
    private long trailingControlEnd = -1;

    private final Wal wal;
    private final Path dir;
    /** The cursor files and the log's control records: where the cursors are read from and kept. */
    private final CursorRecords files;
    /** name -> LSN: on a primary every change appended so far; on a replica as of {@link #stateAsOf}. */
    private final Map<String, Long> state = new TreeMap<>();
    /**
     * A copy of {@link #state} taken after every change on a primary, read without the lock: an event loop resolving
     * {@code ?cursor=} never waits behind a change's append or a file's force.
     */
    private volatile Map<String, Long> published = Map.of();
    /** The last control record this log appended: a change that changes nothing still waits for it. */
    private long lastControlLsn = -1;
    /** A replica's state reflects the control records below this; Long.MAX_VALUE on a primary (kept live). */
    private volatile long stateAsOf = Long.MAX_VALUE;
    /** Whether any cursor was ever created in this log (the base file exists): else nothing to read or write. */
    private volatile boolean used;
    private final Set<String> knownLost = new HashSet<>();
    private final CursorMeters meters = new CursorMeters(this::lagBytes, this::lagSeconds);

    /** Calls nothing on {@code wal} until {@link #open()}: the log is still being put together. */
    Cursors(Wal wal, java.nio.file.Path dir) {
        this.wal = wal;
        this.dir = dir;
        this.files = new CursorRecords(wal, dir);
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

    /** The LSN of cursor {@code name}. @throws UnknownCursorException when there is none */
    public long position(String name) {
        Long lsn;
        if (stateAsOf == Long.MAX_VALUE) {
            lsn = published.get(name); // a primary's: no lock
        } else {
            synchronized (this) {
                catchUp();
                lsn = state.get(name);
            }
        }
        if (lsn == null) {
            throw new UnknownCursorException(name);
        }
        return lsn;
    }

    private void publish() {
        published = Map.copyOf(state);
    }

    /** Every cursor, by name. */
    public synchronized List<Cursor> list() {
        catchUp();
        long end = wal.insertLsn();
        long oldest = wal.oldestLsn();
        List<Cursor> out = new ArrayList<>(state.size());
        state.forEach((name, lsn) -> {
            long seen = endFor(lsn, end);
            out.add(new Cursor(name, lsn, Math.max(0, seen - lsn), lagSeconds(clock, lsn, seen), lsn < oldest));
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
            if (!state.containsKey(name)) {
                return false;
            }
            recordLsn = appendChange(ControlRecord.CURSOR_DELETED, name, 0);
            state.remove(name);
            publish();
            knownLost.remove(name);
            meters.remove(name);
        }
        wal.awaitDurable(recordLsn, level());
        return true;
    }

    /** A reader (flushed records) starting at cursor {@code name}. @throws LsnRemovedException when the cursor is lost */
    public WalReader reader(String name) {
        return wal.reader(position(name));
    }

    // ------------------------------------------------------------------ changes

    /** @param create true: only a new cursor; false: only an existing one; null: either */
    private void change(String name, long lsn, Boolean create) {
        long recordLsn;
        synchronized (this) {
            ensureChangeable(name);
            Long current = state.get(name);
            if (Boolean.TRUE.equals(create) && current != null) {
                throw new IllegalArgumentException("cursor '" + name + "' already exists (at " + Lsn.format(current) + ")");
            }
            if (Boolean.FALSE.equals(create) && current == null) {
                throw new UnknownCursorException(name);
            }
            if (lsn != wal.insertLsn() && lsn >= wal.writtenLsn()) {
                wal.flush(); // in the WAL buffers still: written, a record boundary can be proven (or refused)
            }
            try (WalReader proof = wal.reader(lsn, WalReader.Visibility.WRITTEN)) {
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
            wal.awaitDurable(recordLsn, level());
        }
    }

    /** Appends the change and applies it (under the lock); returns its control record's LSN. */
    private long applyChange(String name, long lsn, Long current) {
        if (!used) {
            files.writeBase(wal.oldestLsn(), Map.of()); // before the first control record: from now on, read them at open
            used = true;
        }
        long recordLsn = appendChange(ControlRecord.CURSOR_SET, name, lsn);
        state.put(name, lsn);
        publish();
        if (lsn >= wal.oldestLsn()) {
            knownLost.remove(name);
        }
        if (current == null) {
            meters.add(name);
        }
        return recordLsn;
    }

    /** Appends a change's control record (under the lock, before the state changes) and notes it; returns its LSN. */
    private long appendChange(int kind, String name, long lsn) {
        byte[] record = ControlRecord.encode(kind, name, lsn);
        long recordLsn = wal.appendControl(record);
        trailing(recordLsn, record.length);
        recent.changed(recordLsn, name, state.get(name));
        return recordLsn;
    }

    /** Extends (or starts) the run of trailing control records with the one at {@code lsn}. */
    private void trailing(long lsn, int payloadLength) {
        lastControlLsn = lsn;
        if (lsn != trailingControlEnd) {
            trailingControlStart = lsn; // something else came between: a new run
        }
        trailingControlEnd = lsn + io.walden.core.record.RecordDescriptor.aligned(
                io.walden.core.record.RecordDescriptor.recordLength(payloadLength));
    }

    /** The log's end as a cursor at {@code lsn} sees it: only the cursors' own records after it do not count. */
    private long endFor(long lsn, long end) {
        return end == trailingControlEnd && lsn >= trailingControlStart ? Math.min(lsn, end) : end;
    }

    private void ensureChangeable(String name) {
        if (!ControlRecord.isValidName(name)) {
            throw new IllegalArgumentException("a cursor's name is 1 to 64 letters, digits, '.', '_' or '-', not '" + name + "'");
        }
        String refused = wal.appendsRefusedReason();
        if (refused != null) {
            throw new AppendsRefusedException(refused);
        }
        if (stateAsOf != Long.MAX_VALUE) {
            throw new AppendsRefusedException("this log is becoming a primary; retry the cursor change");
        }
    }

    /** This replica was promoted: everything it holds is its own now, and its cursors are kept live. */
    synchronized void promoted() {
        if (stateAsOf != Long.MAX_VALUE) {
            catchUpTo(wal.insertLsn());
            stateAsOf = Long.MAX_VALUE;
            publish();
        }
    }

    /** The log's default durability, at least LOCAL: a committed cursor must survive a crash. */
    private Durability level() {
        Durability d = wal.config().durability();
        return d == Durability.OFF ? Durability.LOCAL : d;
    }

    // ------------------------------------------------------------------ the log's calls

    /** At open, after recovery and before any append: the cursors as of the log's end. */
    synchronized void open() throws IOException {
        CursorFile.Snapshot base = files.read(CursorFile.BASE);
        CursorFile.Snapshot checkpoint = files.read(CursorFile.CHECKPOINT);
        if (base == null && checkpoint == null && !files.damaged()) {
            return; // never used: no control record anywhere
        }
        used = true;
        if (base == null) {
            files.writeBase(wal.oldestLsn(), Map.of()); // replaces a damaged one: what it held below the oldest record is lost (said above)
        }
        long end = wal.insertLsn();
        if (checkpoint != null && !files.usable(checkpoint, end)) {
            files.deleteCheckpoint(); // past the recovered end (or truncated past): never trusted again
            checkpoint = null;
        }
        rebuild(checkpoint, end);
        state.keySet().forEach(meters::add);
        knownLost.clear();
        for (Map.Entry<String, Long> e : state.entrySet()) {
            if (e.getValue() < wal.oldestLsn()) {
                knownLost.add(e.getKey());
            }
        }
    }

    /** The changes not yet in a checkpoint file, and writing it. */
    private final RecentChanges recent = new RecentChanges();

    /**
     * This log now follows a primary: from here its cursors are what it has applied and its primary flushed (its read
     * limit, kept across restarts), like its readers.
     */
    synchronized void following() {
        recent.clear();
        if (stateAsOf == Long.MAX_VALUE) {
            long end = wal.insertLsn();
            long limit = Math.min(end, wal.readLimit());
            if (used && limit < end) {
                Set<String> before = new HashSet<>(state.keySet());
                rebuild(usableCheckpoint(limit), limit);
                before.stream().filter(n -> !state.containsKey(n)).forEach(meters::remove);
                state.keySet().stream().filter(n -> !before.contains(n)).forEach(meters::add);
            }
            stateAsOf = limit;
        }
    }

    /** The checkpoint file when it may serve a rebuild as of {@code lsn}, else null. */
    private CursorFile.Snapshot usableCheckpoint(long lsn) {
        CursorFile.Snapshot checkpoint = files.read(CursorFile.CHECKPOINT);
        return files.usable(checkpoint, lsn) ? checkpoint : null;
    }

    /**
     * The cursors as of {@code lsn}: from {@code checkpoint} when given, else the base file, and the control records up to
     * {@code lsn}. A checkpoint the log cannot be read from (its LSN not a record boundary any more) gives way to the base.
     */
    private void rebuild(CursorFile.Snapshot checkpoint, long lsn) {
        if (checkpoint != null) {
            try {
                state.clear();
                state.putAll(checkpoint.cursors());
                scan(checkpoint.asOf(), lsn);
                publish();
                return;
            } catch (IllegalLsnException | WalCorruptedException e) {
                LOG.warn("Cannot read the log from the cursor checkpoint's {} ({}): reading it from the base file's",
                        Lsn.format(checkpoint.asOf()), e.getMessage());
            }
        }
        CursorFile.Snapshot base = files.read(CursorFile.BASE);
        if (base == null) {
            base = new CursorFile.Snapshot(wal.oldestLsn(), Map.of());
        }
        state.clear();
        state.putAll(base.cursors());
        scan(base.asOf(), lsn);
        publish();
    }

    /** A replica's log was rewound to {@code lsn}: cursor changes at or beyond it are undone. */
    synchronized void rewound(long lsn) throws IOException {
        if (!used) {
            return;
        }
        CursorFile.Snapshot checkpoint = files.read(CursorFile.CHECKPOINT);
        if (checkpoint != null && checkpoint.asOf() > lsn) {
            files.deleteCheckpoint();
            checkpoint = null;
        }
        if (stateAsOf != Long.MAX_VALUE && stateAsOf <= lsn) {
            return; // nothing beyond the rewind point was reflected
        }
        Set<String> before = new HashSet<>(state.keySet());
        rebuild(files.usable(checkpoint, lsn) ? checkpoint : null, lsn);
        stateAsOf = lsn;
        before.stream().filter(n -> !state.containsKey(n)).forEach(meters::remove);
        state.keySet().stream().filter(n -> !before.contains(n)).forEach(meters::add);
    }

    /** What truncation must keep: the lowest cursor within {@code maxCursorRetainedBytes} of the end. */
    synchronized long retentionFloor() {
        catchUp();
        long end = wal.insertLsn();
        long cap = wal.config().maxCursorRetainedBytes();
        long floor = Long.MAX_VALUE;
        for (long lsn : state.values()) {
            if (end - lsn <= cap) {
                floor = Math.min(floor, lsn);
            }
        }
        // A change not yet flushed may not survive a crash: until it is, the LSN it replaced still holds the log.
        for (long lsn : recent.previousOfUnflushed(wal.flushedLsn())) {
            if (end - lsn <= cap) {
                floor = Math.min(floor, lsn);
            }
        }
        return floor;
    }

    /**
     * Before segments below {@code keepFrom} are removed: the base file takes over the control records they hold.
     * Read from the log (not the live state), so that it says exactly what lies below {@code keepFrom}.
     */
    void beforeTruncation(long keepFrom) throws IOException {
        // Not under this object's lock: the scan may read much of the log, and the background writer's tick takes the
        // lock. Truncations are serialised by the log (its admin lock), and the base file is theirs alone once used.
        if (!used) {
            return;
        }
        CursorFile.Snapshot base = files.read(CursorFile.BASE);
        long from = base == null ? wal.oldestLsn() : base.asOf();
        if (keepFrom <= from) {
            return;
        }
        Map<String, Long> below = new TreeMap<>(base == null ? Map.of() : base.cursors());
        files.scanInto(below, from, keepFrom);
        files.writeBase(keepFrom, below);
    }

    /** After a truncation: a cursor whose LSN was removed is lost; said once, counted once. */
    synchronized void afterTruncation() {
        long oldest = wal.oldestLsn();
        state.forEach((name, lsn) -> {
            if (lsn < oldest && knownLost.add(name)) {
                LOG.warn("Cursor '{}' at {} is lost: the log was truncated to {} past it (it lagged more than "
                        + "maxCursorRetainedBytes = {}); its reader now fails until it is committed to a kept LSN",
                        name, Lsn.format(lsn), Lsn.format(oldest), wal.config().maxCursorRetainedBytes());
                meters.lost();
            }
        });
    }

    /** At a clean close, everything flushed: the checkpoint file spares the next open reading the log. */
    synchronized void close() throws IOException {
        if (!used) {
            return;
        }
        // The log is closing (nothing can be read any more): a replica's state as of what it reflected, a primary's
        // as of what it flushed (all of it, unless the close could not flush).
        files.writeCheckpoint(stateAsOf == Long.MAX_VALUE ? recent.asOf(state, wal.flushedLsn())
                : new CursorFile.Snapshot(stateAsOf, new TreeMap<>(state)));
    }

    /** A replica received a control record: from now on the cursor files exist, so the next open reads them. */
    synchronized void received() {
        if (!used) {
            files.writeBase(wal.oldestLsn(), Map.of());
            used = true;
        }
    }

    // ------------------------------------------------------------------ reading control records

    /** A replica: reflect what its readers may see now. */
    private void catchUp() {
        if (stateAsOf != Long.MAX_VALUE) {
            catchUpTo(Math.max(stateAsOf, wal.visibleLsn(WalReader.Visibility.FLUSHED)));
        }
    }

    private void catchUpTo(long limit) {
        if (stateAsOf != Long.MAX_VALUE && limit > stateAsOf) {
            Set<String> before = new HashSet<>(state.keySet());
            scan(stateAsOf, limit);
            stateAsOf = limit;
            recent.scanned();
            before.stream().filter(n -> !state.containsKey(n)).forEach(meters::remove);
            state.keySet().stream().filter(n -> !before.contains(n)).forEach(meters::add);
        }
    }

    private void scan(long from, long until) {
        files.scanInto(state, from, until);
    }

    // ------------------------------------------------------------------ lag in time

    /** The background writer's periodic call: samples the log's end, and keeps the checkpoint file recent. */
    void tick() {
        sample();
        try {
            checkpointIfChanged();
        } catch (IOException | RuntimeException e) {
            // Only a shortcut for the next open: a failure here costs a longer read of the log then, nothing else.
            LOG.warn("Could not write {}: {}", dir.resolve(CursorFile.CHECKPOINT), e.toString());
        }
    }

    /**
     * Writes the checkpoint file when the cursors changed, so that opening after a crash reads only the control records
     * of the last second or so, not the log since the last truncation.
     */
    void checkpointIfChanged() throws IOException {
        CursorFile.Snapshot snapshot;
        synchronized (this) {
            if (!used) {
                return;
            }
            snapshot = recent.snapshot(state, stateAsOf == Long.MAX_VALUE ? wal.flushedLsn() : stateAsOf,
                    stateAsOf == Long.MAX_VALUE);
        }
        if (snapshot != null) {
            files.writeCheckpoint(snapshot); // outside the lock: only the background writer writes it while the log is open
        }
    }

    private void sample() {
        clock.sample(wal.insertLsn(), System.nanoTime());
    }

    private static double lagSeconds(EndClock clock, long lsn, long end) {
        return lsn >= end ? 0 : clock.secondsSincePassed(lsn, System.nanoTime());
    }

    // ------------------------------------------------------------------ meters

    /** {@code walden.cursor.lag.bytes} and {@code walden.cursor.lag.seconds} per cursor (tag {@code cursor}), {@code walden.cursor.lost}. */
    MeterBinder meterBinder() {
        return registry -> {
            synchronized (this) { // no cursor comes or goes while the registry gets its gauges
                meters.bindTo(registry, state.keySet());
            }
        };
    }

    private double lagSeconds(String name) {
        Long lsn;
        long end;
        synchronized (this) {
            lsn = state.get(name);
            end = lsn == null ? 0 : endFor(lsn, wal.insertLsn());
        }
        return lsn == null ? 0 : lagSeconds(clock, lsn, end);
    }

    private double lagBytes(String name) {
        synchronized (this) {
            Long lsn = state.get(name);
            return lsn == null ? 0 : Math.max(0, endFor(lsn, wal.insertLsn()) - lsn);
        }
    }
}
