package io.walden.core.internal.cursor;

import io.walden.core.Lsn;
import io.walden.core.internal.LogPositions;
import io.walden.core.internal.recovery.CursorFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The cursors' part in truncation: the LSN they hold the log back at (each cursor within
 * {@link WalConfig#maxCursorRetainedBytes()} of the end, and the LSN an unflushed change replaced), the base cursor file
 * that takes over the control records a truncation removes, and the cursors it left behind: each one lost is logged
 * and counted once ({@code walden.cursor.lost}) until it is committed to a kept LSN or deleted.
 *
 * <p>Thread-safety: {@link #floor} and {@link #afterTruncation} take the {@link CursorBook} lock (the {@code lock} given,
 * that object's monitor); {@link #opened}, {@link #committed} and {@link #deleted} are called under it;
 * {@link #beforeTruncation} takes no lock (see there).
 */
public final class CursorRetention {
    /** The cursors' messages, wherever the code is that logs them. */
    private static final Logger LOG = LoggerFactory.getLogger(CursorBook.class);

    /** The log's positions (not the facade: a part never reaches back up to Wal). */
    private final LogPositions positions;
    /** How far behind the end a cursor may hold the log back ({@code maxCursorRetainedBytes}). */
    private final long maxRetainedBytes;
    /** The {@link CursorBook} object: its monitor guards {@link #state} and {@link #knownLost}. */
    private final Object lock;
    private final CursorRecords files;
    private final CursorState state;
    /** A replica's state is caught up before it says what truncation must keep. */
    private final CursorReplay replay;
    private final CursorMeters meters;
    /** The cursors already said to be lost: said once, counted once. */
    private final Set<String> knownLost = new HashSet<>();

    public CursorRetention(LogPositions positions, long maxRetainedBytes, Object lock, CursorRecords files, CursorState state,
                           CursorReplay replay, CursorMeters meters) {
        this.positions = positions;
        this.maxRetainedBytes = maxRetainedBytes;
        this.lock = lock;
        this.files = files;
        this.state = state;
        this.replay = replay;
        this.meters = meters;
    }

    /** At open, once the cursors are read: those already below the oldest record were lost before, and not said again. */
    public void opened() {
        knownLost.clear();
        for (Map.Entry<String, Long> e : state.lsns.entrySet()) {
            if (e.getValue() < positions.oldestLsn()) {
                knownLost.add(e.getKey());
            }
        }
    }

    /** Cursor {@code name} was committed to {@code lsn}: at a kept LSN it is whole again. */
    public void committed(String name, long lsn) {
        if (lsn >= positions.oldestLsn()) {
            knownLost.remove(name);
        }
    }

    /** Cursor {@code name} was deleted. */
    public void deleted(String name) {
        knownLost.remove(name);
    }

    /** What truncation must keep: the lowest cursor within {@code maxCursorRetainedBytes} of the end. */
    public long floor() {
        synchronized (lock) {
            replay.catchUp();
            long end = positions.insertLsn();
            long cap = maxRetainedBytes;
            long floor = Long.MAX_VALUE;
            for (long lsn : state.lsns.values()) {
                if (end - lsn <= cap) {
                    floor = Math.min(floor, lsn);
                }
            }
            // A change not yet flushed may not survive a crash: until it is, the LSN it replaced still holds the log.
            for (long lsn : state.recent.previousOfUnflushed(positions.flushedLsn())) {
                if (end - lsn <= cap) {
                    floor = Math.min(floor, lsn);
                }
            }
            return floor;
        }
    }

    /**
     * Before segments below {@code keepFrom} are removed: the base file takes over the control records they hold.
     * Read from the log (not the live state), so that it says exactly what lies below {@code keepFrom}.
     */
    public void beforeTruncation(long keepFrom) throws IOException {
        // Not under the CursorBook lock: the scan may read much of the log, and the background writer's tick takes the
        // lock. Truncations are serialised by the log (its admin lock), and the base file is theirs alone once used.
        if (!state.used) {
            return;
        }
        CursorFile.Snapshot base = files.read(CursorFile.BASE);
        long from = base == null ? positions.oldestLsn() : base.asOf();
        if (keepFrom <= from) {
            return;
        }
        Map<String, Long> below = new TreeMap<>(base == null ? Map.of() : base.cursors());
        files.scanInto(below, from, keepFrom);
        files.writeBase(keepFrom, below);
    }

    /** After a truncation: a cursor whose LSN was removed is lost; said once, counted once. */
    public void afterTruncation() {
        synchronized (lock) {
            long oldest = positions.oldestLsn();
            state.lsns.forEach((name, lsn) -> {
                if (lsn < oldest && knownLost.add(name)) {
                    LOG.warn("Cursor '{}' at {} is lost: the log was truncated to {} past it (it lagged more than "
                            + "maxCursorRetainedBytes = {}); its reader now fails until it is committed to a kept LSN",
                            name, Lsn.format(lsn), Lsn.format(oldest), maxRetainedBytes);
                    meters.lost();
                }
            });
        }
    }
}
