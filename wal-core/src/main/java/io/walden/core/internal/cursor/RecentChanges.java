package io.walden.core.internal.cursor;

import io.walden.core.internal.recovery.CursorFile;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A primary's cursor changes since the last checkpoint file, so that the file can say what the cursors were as of the
 * flushed LSN: the changes at or beyond it are undone in the copy (they may not survive a crash; the log has them if
 * they do).
 *
 * <p>Thread-safety: none; used under the {@link Cursors} lock.
 */
public final class RecentChanges {
    private record Change(long lsn, String name, Long previous) {
    }

    private final ArrayDeque<Change> changes = new ArrayDeque<>();
    /** The cursors changed since the last snapshot. */
    private boolean dirty;

    /** A primary changed cursor {@code name} with the control record at {@code lsn}; {@code previous}: null when new. */
    public void changed(long lsn, String name, Long previous) {
        changes.addLast(new Change(lsn, name, previous));
        dirty = true;
    }

    /** A replica's cursors moved by reading control records: they are as of the LSN read to. */
    public void scanned() {
        dirty = true;
    }

    /** The log stopped being a primary: its changes are no longer its own to undo. */
    public void clear() {
        changes.clear();
    }

    /**
     * The cursors as of {@code asOf}, or null when nothing changed since the last call.
     *
     * @param state the cursors now
     * @param undo  whether to undo the changes at or beyond {@code asOf} (a primary's; a replica's state is as of it)
     */
    public CursorFile.Snapshot snapshot(Map<String, Long> state, long asOf, boolean undo) {
        if (!dirty) {
            return null;
        }
        CursorFile.Snapshot snapshot = undo ? asOf(state, asOf) : new CursorFile.Snapshot(asOf, new TreeMap<>(state));
        if (undo) {
            while (!changes.isEmpty() && changes.peekFirst().lsn() < asOf) {
                changes.pollFirst();
            }
        }
        dirty = undo && !changes.isEmpty();
        return snapshot;
    }

    /** A primary's cursors as of {@code asOf}: {@code state} with the changes at or beyond it undone. */
    public CursorFile.Snapshot asOf(Map<String, Long> state, long asOf) {
        Map<String, Long> copy = new TreeMap<>(state);
        for (Iterator<Change> it = changes.descendingIterator(); it.hasNext(); ) {
            Change c = it.next();
            if (c.lsn() < asOf) {
                break;
            }
            if (c.previous() == null) {
                copy.remove(c.name());
            } else {
                copy.put(c.name(), c.previous());
            }
        }
        return new CursorFile.Snapshot(asOf, copy);
    }

    /** The LSNs that changes at or beyond {@code flushed} replaced: what a crash now would bring back. */
    public List<Long> previousOfUnflushed(long flushed) {
        List<Long> out = new ArrayList<>();
        for (Iterator<Change> it = changes.descendingIterator(); it.hasNext(); ) {
            Change c = it.next();
            if (c.lsn() < flushed) {
                break;
            }
            if (c.previous() != null) {
                out.add(c.previous());
            }
        }
        return out;
    }
}
