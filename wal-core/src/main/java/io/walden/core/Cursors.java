package io.walden.core;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.walden.core.record.ControlRecord;
import io.walden.core.recovery.CursorFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;

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

    /**
     * When the log's end passed which LSN, sampled by the background writer about once a second
     * ({@link #tick}): how long ago the end passed a cursor is its lag in time, to that resolution. An hour of
     * samples; a cursor further behind (or behind since before this open) shows at least the oldest sample's age.
     */
    private static final int SAMPLES = 3600;
    private final long[] sampleLsn = new long[SAMPLES];
    private final long[] sampleNanos = new long[SAMPLES];
    private int samples;
    private int nextSample;
    /** The run of control records this log appended last, [start, end): a cursor committed to the log's end lags 0. */
    private long trailingControlStart = -1;
    private long trailingControlEnd = -1;

    private final Wal wal;
    private final Path dir;
    /** name -> LSN: on a primary every change appended so far; on a replica as of {@link #stateAsOf}. */
    private final Map<String, Long> state = new TreeMap<>();
    /** A replica's state reflects the control records below this; Long.MAX_VALUE on a primary (kept live). */
    private long stateAsOf = Long.MAX_VALUE;
    /** Whether any cursor was ever created in this log (the base file exists): else nothing to read or write. */
    private volatile boolean used;
    private final Set<String> knownLost = new HashSet<>();
    private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>();
    private final Map<String, List<Meter>> gauges = new HashMap<>();
    private final List<Counter> lostCounters = new CopyOnWriteArrayList<>();

    Cursors(Wal wal) {
        this.wal = wal;
        this.dir = wal.directory();
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
    public synchronized long position(String name) {
        catchUp();
        Long lsn = state.get(name);
        if (lsn == null) {
            throw new UnknownCursorException(name);
        }
        return lsn;
    }

    /** Every cursor, by name. */
    public synchronized List<Cursor> list() {
        catchUp();
        long end = wal.insertLsn();
        long oldest = wal.oldestLsn();
        List<Cursor> out = new ArrayList<>(state.size());
        state.forEach((name, lsn) -> {
            long seen = endFor(lsn, end);
            out.add(new Cursor(name, lsn, Math.max(0, seen - lsn), lagSeconds(lsn, seen), lsn < oldest));
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
            byte[] record = ControlRecord.encode(ControlRecord.CURSOR_DELETED, name, 0);
            recordLsn = wal.appendControl(record);
            trailing(recordLsn, record.length);
            recent.addLast(new Change(recordLsn, name, state.get(name)));
            dirty = true;
            state.remove(name);
            knownLost.remove(name);
            unregisterGauge(name);
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
            if (current != null && lsn < current) {
                throw new CursorBackwardsException(name, current, lsn);
            }
            if (current != null && lsn == current) {
                return;
            }
            try (WalReader proof = wal.reader(lsn, WalReader.Visibility.WRITTEN)) {
                proof.position(); // opening it proved lsn kept, not beyond the end, and a record boundary when written
            }
            if (!used) {
                writeBase(wal.oldestLsn(), Map.of()); // before the first control record: from now on, read them at open
                used = true;
            }
            byte[] record = ControlRecord.encode(ControlRecord.CURSOR_SET, name, lsn);
            recordLsn = wal.appendControl(record);
            trailing(recordLsn, record.length);
            recent.addLast(new Change(recordLsn, name, current));
            dirty = true;
            state.put(name, lsn);
            if (lsn >= wal.oldestLsn()) {
                knownLost.remove(name);
            }
            if (current == null) {
                registerGauges(name);
            }
        }
        wal.awaitDurable(recordLsn, level());
    }

    /** Extends (or starts) the run of trailing control records with the one at {@code lsn}. */
    private void trailing(long lsn, int payloadLength) {
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
            catchUpTo(wal.insertLsn()); // a promoted replica: everything it holds is its own now
            stateAsOf = Long.MAX_VALUE;
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
        CursorFile.Snapshot base = readFile(CursorFile.BASE);
        CursorFile.Snapshot checkpoint = readFile(CursorFile.CHECKPOINT);
        if (base == null && checkpoint == null && !damaged) {
            return; // never used: no control record anywhere
        }
        used = true;
        if (base == null) {
            writeBase(wal.oldestLsn(), Map.of()); // replaces a damaged one: what it held below the oldest record is lost (said above)
        }
        long end = wal.insertLsn();
        CursorFile.Snapshot start = usable(checkpoint, end) ? checkpoint : base;
        if (start == null) {
            start = new CursorFile.Snapshot(wal.oldestLsn(), Map.of());
        }
        state.clear();
        state.putAll(start.cursors());
        scan(start.asOf(), end);
        state.keySet().forEach(this::registerGauges);
        knownLost.clear();
        for (Map.Entry<String, Long> e : state.entrySet()) {
            if (e.getValue() < wal.oldestLsn()) {
                knownLost.add(e.getKey());
            }
        }
    }

    /** A primary's changes not yet in a checkpoint file: what to undo to get the cursors as of an earlier LSN. */
    private record Change(long lsn, String name, Long previous) {
    }

    private final java.util.ArrayDeque<Change> recent = new java.util.ArrayDeque<>();
    /** The cursors changed since the last checkpoint file. */
    private boolean dirty;

    /** Set when a cursor file could not be read: the log is read for control records from its oldest one instead. */
    private boolean damaged;

    /**
     * A cursor file, or null when it is absent or damaged. A damaged file does not keep the log from opening (its
     * records are all there): the checkpoint is only a shortcut, and without the base the cursors whose every change
     * was truncated away are missing, which is said loudly.
     */
    private CursorFile.Snapshot readFile(String name) {
        try {
            return CursorFile.read(dir, name);
        } catch (IOException | WalCorruptedException e) {
            damaged = true;
            LOG.error("Cannot read {} ({}): {}", dir.resolve(name), e.getMessage(), CursorFile.BASE.equals(name)
                    ? "the cursors are rebuilt from the control records still in the log; a cursor whose changes were all "
                    + "truncated away is missing until it is created again"
                    : "the cursors are rebuilt from the base file and the log");
            return null;
        }
    }

    /** A checkpoint serves when it lies within what the log holds (a rewind below it deletes it). */
    private boolean usable(CursorFile.Snapshot checkpoint, long end) {
        return checkpoint != null && checkpoint.asOf() >= wal.oldestLsn() && checkpoint.asOf() <= end;
    }

    /** This log now follows a primary: from here its cursors are what it has applied and its primary flushed. */
    synchronized void following() {
        recent.clear();
        if (stateAsOf == Long.MAX_VALUE) {
            stateAsOf = wal.insertLsn(); // everything it holds so far is reflected; a rewind below it rebuilds
        }
    }

    /** A replica's log was rewound to {@code lsn}: cursor changes at or beyond it are undone. */
    synchronized void rewound(long lsn) throws IOException {
        if (!used) {
            return;
        }
        CursorFile.Snapshot checkpoint = readFile(CursorFile.CHECKPOINT);
        if (checkpoint != null && checkpoint.asOf() > lsn) {
            CursorFile.delete(dir, CursorFile.CHECKPOINT);
            checkpoint = null;
        }
        if (stateAsOf != Long.MAX_VALUE && stateAsOf <= lsn) {
            return; // nothing beyond the rewind point was reflected
        }
        CursorFile.Snapshot start = usable(checkpoint, lsn) ? checkpoint : readFile(CursorFile.BASE);
        if (start == null) {
            start = new CursorFile.Snapshot(wal.oldestLsn(), Map.of());
        }
        Set<String> before = new HashSet<>(state.keySet());
        state.clear();
        state.putAll(start.cursors());
        scan(start.asOf(), lsn);
        stateAsOf = lsn;
        before.stream().filter(n -> !state.containsKey(n)).forEach(this::unregisterGauge);
        state.keySet().stream().filter(n -> !before.contains(n)).forEach(this::registerGauges);
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
        CursorFile.Snapshot base = readFile(CursorFile.BASE);
        long from = base == null ? wal.oldestLsn() : base.asOf();
        if (keepFrom <= from) {
            return;
        }
        Map<String, Long> below = new TreeMap<>(base == null ? Map.of() : base.cursors());
        scanInto(below, from, keepFrom);
        writeBase(keepFrom, below);
    }

    /** After a truncation: a cursor whose LSN was removed is lost; said once, counted once. */
    synchronized void afterTruncation() {
        long oldest = wal.oldestLsn();
        state.forEach((name, lsn) -> {
            if (lsn < oldest && knownLost.add(name)) {
                LOG.warn("Cursor '{}' at {} is lost: the log was truncated to {} past it (it lagged more than "
                        + "maxCursorRetainedBytes = {}); its reader now fails until it is committed to a kept LSN",
                        name, Lsn.format(lsn), Lsn.format(oldest), wal.config().maxCursorRetainedBytes());
                lostCounters.forEach(Counter::increment);
            }
        });
    }

    /** At a clean close, everything flushed: the checkpoint file spares the next open reading the log. */
    synchronized void close() throws IOException {
        if (!used) {
            return;
        }
        // The log is closing (nothing can be read any more): a replica's state as of what it reflected, a primary's
        // as of its end.
        long asOf = stateAsOf == Long.MAX_VALUE ? wal.insertLsn() : stateAsOf;
        CursorFile.write(dir, CursorFile.CHECKPOINT, new CursorFile.Snapshot(asOf, new TreeMap<>(state)));
    }

    /** A replica received a control record: from now on the cursor files exist, so the next open reads them. */
    synchronized void received() {
        if (!used) {
            writeBase(wal.oldestLsn(), Map.of());
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
            dirty = true;
            before.stream().filter(n -> !state.containsKey(n)).forEach(this::unregisterGauge);
            state.keySet().stream().filter(n -> !before.contains(n)).forEach(this::registerGauges);
        }
    }

    private void scan(long from, long until) {
        scanInto(state, from, until);
    }

    private void scanInto(Map<String, Long> into, long from, long until) {
        try (WalReader r = wal.controlScanner(from, until, (lsn, payload) -> {
            ControlRecord.Cursor c = ControlRecord.decode(payload);
            if (c == null) {
                LOG.warn("Skipping the control record at {}: not one this version knows", Lsn.format(lsn));
            } else if (c.kind() == ControlRecord.CURSOR_SET) {
                into.put(c.name(), c.lsn());
            } else {
                into.remove(c.name());
            }
        })) {
            while (r.next() != null) {
                // the application's records: not the scan's business
            }
        }
    }

    private void writeBase(long asOf, Map<String, Long> cursors) {
        try {
            CursorFile.write(dir, CursorFile.BASE, new CursorFile.Snapshot(asOf, new TreeMap<>(cursors)));
        } catch (IOException e) {
            throw new WalException("could not write " + dir.resolve(CursorFile.BASE) + ": " + e.getMessage(), e);
        }
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
     * of the last second or so, not the log since the last truncation. A primary's file is as of its flushed LSN: the
     * changes at or beyond it are undone in the copy (they may not survive a crash; the log has them if they do).
     */
    synchronized void checkpointIfChanged() throws IOException {
        if (!used || !dirty) {
            return;
        }
        if (stateAsOf != Long.MAX_VALUE) {
            CursorFile.write(dir, CursorFile.CHECKPOINT, new CursorFile.Snapshot(stateAsOf, new TreeMap<>(state)));
            dirty = false;
            return;
        }
        long flushed = wal.flushedLsn();
        Map<String, Long> asOfFlushed = new TreeMap<>(state);
        for (java.util.Iterator<Change> it = recent.descendingIterator(); it.hasNext(); ) {
            Change c = it.next();
            if (c.lsn() < flushed) {
                break;
            }
            if (c.previous() == null) {
                asOfFlushed.remove(c.name());
            } else {
                asOfFlushed.put(c.name(), c.previous());
            }
        }
        CursorFile.write(dir, CursorFile.CHECKPOINT, new CursorFile.Snapshot(flushed, asOfFlushed));
        while (!recent.isEmpty() && recent.peekFirst().lsn() < flushed) {
            recent.pollFirst();
        }
        dirty = !recent.isEmpty();
    }

    private void sample() {
        long end = wal.insertLsn();
        long now = System.nanoTime();
        synchronized (sampleLsn) {
            int last = (nextSample + SAMPLES - 1) % SAMPLES;
            if (samples > 0 && sampleLsn[last] == end) {
                return; // the end has not moved: the earlier sample says when it got here
            }
            sampleLsn[nextSample] = end;
            sampleNanos[nextSample] = now;
            nextSample = (nextSample + 1) % SAMPLES;
            samples = Math.min(samples + 1, SAMPLES);
        }
    }

    /** Seconds since the log's end first passed {@code lsn} (0 when nothing lies beyond it). */
    private double lagSeconds(long lsn, long end) {
        if (lsn >= end) {
            return 0;
        }
        synchronized (sampleLsn) {
            if (samples == 0) {
                return 0;
            }
            int oldest = (nextSample + SAMPLES - samples) % SAMPLES;
            long passed = sampleNanos[oldest]; // a lower bound when even the oldest sample was past it
            for (int i = samples - 1; i >= 0; i--) { // newest first: a caught-up cursor stops at once
                int at = (oldest + i) % SAMPLES;
                if (sampleLsn[at] <= lsn) {
                    passed = i + 1 < samples ? sampleNanos[(oldest + i + 1) % SAMPLES] : System.nanoTime();
                    break;
                }
            }
            return Math.max(0, (System.nanoTime() - passed) / 1e9);
        }
    }

    // ------------------------------------------------------------------ meters

    /** {@code walden.cursor.lag.bytes} and {@code walden.cursor.lag.seconds} per cursor (tag {@code cursor}), {@code walden.cursor.lost}. */
    MeterBinder meterBinder() {
        return registry -> {
            registries.add(registry);
            lostCounters.add(Counter.builder("walden.cursor.lost")
                    .description("Cursors lost: truncation removed their LSN (they lagged beyond maxCursorRetainedBytes)")
                    .register(registry));
            synchronized (this) {
                state.keySet().forEach(name -> registerGauge(registry, name));
            }
        };
    }

    private void registerGauges(String name) {
        for (MeterRegistry registry : registries) {
            registerGauge(registry, name);
        }
    }

    private void registerGauge(MeterRegistry registry, String name) {
        Gauge g = Gauge.builder("walden.cursor.lag.bytes", this, c -> c.lag(name)).tag("cursor", name).baseUnit("bytes")
                .description("How far the log's end is past the cursor").register(registry);
        Gauge seconds = Gauge.builder("walden.cursor.lag.seconds", this, c -> c.lagSeconds(name)).tag("cursor", name)
                .baseUnit("seconds").description("How long ago the log's end passed the cursor (about 1 s resolution)")
                .register(registry);
        gauges.computeIfAbsent(name, k -> new ArrayList<>()).add(g);
        gauges.get(name).add(seconds);
    }

    private double lagSeconds(String name) {
        Long lsn;
        long end;
        synchronized (this) {
            lsn = state.get(name);
            end = lsn == null ? 0 : endFor(lsn, wal.insertLsn());
        }
        return lsn == null ? 0 : lagSeconds(lsn, end);
    }

    private void unregisterGauge(String name) {
        List<Meter> meters = gauges.remove(name);
        if (meters != null) {
            for (Meter m : meters) {
                registries.forEach(r -> r.remove(m));
            }
        }
    }

    private double lag(String name) {
        synchronized (this) {
            Long lsn = state.get(name);
            return lsn == null ? 0 : Math.max(0, endFor(lsn, wal.insertLsn()) - lsn);
        }
    }
}
