package io.walden.core.internal.cursor;

import io.walden.core.IllegalLsnException;
import io.walden.core.Lsn;
import io.walden.core.WalCorruptedException;
import io.walden.core.WalReader;
import io.walden.core.internal.LogPositions;
import io.walden.core.internal.recovery.CursorFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Keeps the cursors' state in step with the log: rebuilt at open from the cursor files and the control records after
 * them, rebuilt when the log starts following a primary or is rewound, caught up on a replica as its readers see more,
 * kept live once it is promoted, and written to the checkpoint file so that the next open reads little of the log.
 * The gauges come and go with the cursors it rebuilds.
 *
 * <p>Thread-safety: the entry points the log calls ({@link #following}, {@link #promoted}, {@link #rewound},
 * {@link #received}, {@link #close}, {@link #tick}) take the {@link CursorBook} lock (the {@code lock} given, that
 * object's monitor), the tick only to copy the state (it writes the file outside the lock); {@link #open},
 * {@link #catchUp} and {@link #markUsed} are called under it.
 */
public final class CursorReplay {
    /** The cursors' messages, wherever the code is that logs them. */
    private static final Logger LOG = LoggerFactory.getLogger(CursorBook.class);

    /** The log's positions (not the facade: a part never reaches back up to Wal). */
    private final LogPositions positions;
    private final Path dir;
    /** The {@link CursorBook} object: its monitor guards {@link #state}. */
    private final Object lock;
    /** The cursor files and the log's control records: where the cursors are read from and kept. */
    private final CursorRecords files;
    private final CursorState state;
    /** The cursors' lag: its record of this log's own trailing cursor records goes when the log stops being a primary. */
    private final CursorLag lag;
    private final CursorMeters meters;

    public CursorReplay(LogPositions positions, Path dir, Object lock, CursorRecords files, CursorState state, CursorLag lag) {
        this.positions = positions;
        this.dir = dir;
        this.lock = lock;
        this.files = files;
        this.state = state;
        this.lag = lag;
        this.meters = lag.meters;
    }

    /** At open, after recovery and before any append: the cursors as of the log's end (under the lock). */
    public void open() throws IOException {
        CursorFile.Snapshot base = files.read(CursorFile.BASE);
        CursorFile.Snapshot checkpoint = files.read(CursorFile.CHECKPOINT);
        if (base == null && checkpoint == null && !files.damaged()) {
            return; // never used: no control record anywhere
        }
        state.used = true;
        if (base == null) {
            files.writeBase(positions.oldestLsn(), Map.of()); // replaces a damaged one: what it held below the oldest record is lost (said above)
        }
        long end = positions.insertLsn();
        if (checkpoint != null && !files.usable(checkpoint, end)) {
            files.deleteCheckpoint(); // past the recovered end (or truncated past): never trusted again
            checkpoint = null;
        }
        rebuild(checkpoint, end);
        state.lsns.keySet().forEach(meters::add);
    }

    /**
     * This log now follows a primary: from here its cursors are what it has applied and its primary flushed (its read
     * limit, kept across restarts), like its readers.
     */
    public void following() {
        synchronized (lock) {
            state.recent.clear();
            lag.forgetOwnRun(); // a primary's: what it appends from now on is its primary's
            if (state.live()) {
                long end = positions.insertLsn();
                long limit = Math.min(end, positions.readLimit());
                if (state.used && limit < end) {
                    Set<String> before = new HashSet<>(state.lsns.keySet());
                    rebuild(usableCheckpoint(limit), limit);
                    gaugesFollow(before);
                }
                state.asOf = limit;
            }
        }
    }

    /** This replica was promoted: everything it holds is its own now, and its cursors are kept live. */
    public void promoted() {
        synchronized (lock) {
            if (!state.live()) {
                catchUpTo(positions.insertLsn());
                state.asOf = Long.MAX_VALUE;
                state.publish();
            }
        }
    }

    /** A replica's log was rewound to {@code lsn}: cursor changes at or beyond it are undone. */
    public void rewound(long lsn) throws IOException {
        synchronized (lock) {
            lag.forgetOwnRun();
            lag.sample(); // the end moved back: the lag in time counts from the new end's samples, not the removed ones
            if (!state.used) {
                // No cursor to rebuild, but the LSN the (empty) state is as of must not outlive the records it named:
                // the next catch-up reads the log from it, and the new primary's records may put it inside one.
                state.asOf = Math.min(state.asOf, lsn);
                return;
            }
            CursorFile.Snapshot checkpoint = files.read(CursorFile.CHECKPOINT);
            if (checkpoint != null && checkpoint.asOf() > lsn) {
                files.deleteCheckpoint();
                checkpoint = null;
            }
            if (!state.live() && state.asOf <= lsn) {
                return; // nothing beyond the rewind point was reflected
            }
            Set<String> before = new HashSet<>(state.lsns.keySet());
            rebuild(files.usable(checkpoint, lsn) ? checkpoint : null, lsn);
            state.asOf = lsn;
            gaugesFollow(before);
        }
    }

    /** A replica received a control record: from now on the cursor files exist, so the next open reads them. */
    public void received() {
        synchronized (lock) {
            markUsed();
        }
    }

    /** Before this log's first control record (under the lock): from now on, the next open reads the cursor files. */
    public void markUsed() {
        if (!state.used) {
            files.writeBase(positions.oldestLsn(), Map.of());
            state.used = true;
        }
    }

    /** At a clean close, everything flushed: the checkpoint file spares the next open reading the log. */
    public void close() throws IOException {
        synchronized (lock) {
            if (!state.used) {
                return;
            }
            // The log is closing (nothing can be read any more): a replica's state as of what it reflected, a primary's
            // as of what it flushed (all of it, unless the close could not flush).
            files.writeCheckpoint(state.live() ? state.recent.asOf(state.lsns, positions.flushedLsn())
                    : new CursorFile.Snapshot(state.asOf, new TreeMap<>(state.lsns)));
        }
    }

    /** The background writer's periodic call: keeps the checkpoint file recent (a failure is logged, not thrown). */
    public void tick() {
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
    private void checkpointIfChanged() throws IOException {
        CursorFile.Snapshot snapshot;
        synchronized (lock) {
            if (!state.used) {
                return;
            }
            snapshot = state.recent.snapshot(state.lsns, state.live() ? positions.flushedLsn() : state.asOf, state.live());
        }
        if (snapshot != null) {
            files.writeCheckpoint(snapshot); // outside the lock: only the background writer writes it while the log is open
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
                state.lsns.clear();
                state.lsns.putAll(checkpoint.cursors());
                scan(checkpoint.asOf(), lsn);
                state.publish();
                return;
            } catch (IllegalLsnException | WalCorruptedException e) {
                LOG.warn("Cannot read the log from the cursor checkpoint's {} ({}): reading it from the base file's",
                        Lsn.format(checkpoint.asOf()), e.getMessage());
            }
        }
        CursorFile.Snapshot base = files.read(CursorFile.BASE);
        if (base == null) {
            base = new CursorFile.Snapshot(positions.oldestLsn(), Map.of());
        }
        state.lsns.clear();
        state.lsns.putAll(base.cursors());
        scan(base.asOf(), lsn);
        state.publish();
    }

    /** A replica: reflect what its readers may see now (under the lock). */
    public void catchUp() {
        if (!state.live()) {
            catchUpTo(Math.max(state.asOf, positions.visibleLsn(WalReader.Visibility.FLUSHED)));
        }
    }

    private void catchUpTo(long limit) {
        if (!state.live() && limit > state.asOf) {
            Set<String> before = new HashSet<>(state.lsns.keySet());
            try {
                scan(state.asOf, limit);
            } catch (IllegalLsnException e) {
                // Not a record boundary any more (a defect kept a position across a rewind): the status, the cursor API
                // and truncation all come through here, so rebuild from proven boundaries rather than fail them all.
                LOG.warn("Cannot read the cursor records from {} ({}): rebuilding the cursors as of {}",
                        Lsn.format(state.asOf), e.getMessage(), Lsn.format(limit));
                rebuild(usableCheckpoint(limit), limit);
            }
            state.asOf = limit;
            state.recent.scanned();
            gaugesFollow(before);
        }
    }

    private void scan(long from, long until) {
        files.scanInto(state.lsns, from, until);
    }

    /** The cursors were rebuilt or read on from {@code before}: the gauges of those gone go, the new ones get theirs. */
    private void gaugesFollow(Set<String> before) {
        before.stream().filter(n -> !state.lsns.containsKey(n)).forEach(meters::remove);
        state.lsns.keySet().stream().filter(n -> !before.contains(n)).forEach(meters::add);
    }
}
