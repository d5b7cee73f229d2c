package io.walden.core.internal.cursor;

import java.util.Map;
import java.util.TreeMap;

/**
 * What the cursors are, shared by the classes that keep them: {@link CursorBook} changes them on a primary,
 * {@link CursorReplay} rebuilds them from the cursor files and the log's control records, {@link CursorRetention} and
 * {@link CursorLag} read them. It guarantees only that {@link #published(String)} answers from a complete copy taken
 * after a change, never from a map being changed.
 *
 * <p>Thread-safety: guarded by the {@link CursorBook} lock (that object's monitor), except the volatile fields, which are
 * read without it ({@link CursorBook#position} on a primary, and truncation's {@link CursorRetention#beforeTruncation}).
 */
public final class CursorState {
    /** name -> LSN: on a primary every change appended so far; on a replica as of {@link #asOf}. */
    public final Map<String, Long> lsns = new TreeMap<>();
    /**
     * A copy of {@link #lsns} taken after every change on a primary, read without the lock: an event loop resolving
     * {@code ?cursor=} never waits behind a change's append or a file's force.
     */
    private volatile Map<String, Long> published = Map.of();
    /** A replica's state reflects the control records below this; Long.MAX_VALUE on a primary (kept live). */
    public volatile long asOf = Long.MAX_VALUE;
    /** Whether any cursor was ever created in this log (the base file exists): else nothing to read or write. */
    public volatile boolean used;
    /** The changes not yet in a checkpoint file, and writing it. */
    public final RecentChanges recent = new RecentChanges();

    /** Whether the state is kept live (a primary's), not as of an LSN (a replica's). */
    public boolean live() {
        return asOf == Long.MAX_VALUE;
    }

    /** After every change of {@link #lsns} (under the lock). */
    public void publish() {
        published = Map.copyOf(lsns);
    }

    /** A primary's cursor {@code name} as last published, or null; no lock. */
    public Long published(String name) {
        return published.get(name);
    }
}
