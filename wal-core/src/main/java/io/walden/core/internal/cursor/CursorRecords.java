package io.walden.core.internal.cursor;

import io.walden.core.Lsn;
import io.walden.core.WalCorruptedException;
import io.walden.core.WalException;
import io.walden.core.internal.LogReader;
import io.walden.core.internal.LogPositions;
import io.walden.core.internal.record.ControlRecord;
import io.walden.core.internal.recovery.CursorFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where the cursors are kept (docs/format.md, "Control records" and "Cursor files"): the log's control records, read
 * by {@link #scanInto}, and the cursor files that spare reading them all. {@link CursorReplay} and
 * {@link CursorRetention} decide what to read and when; this class only reads and writes.
 *
 * <p>Thread-safety: called under the {@link CursorBook} lock, or by the log's truncation (serialised by the log).
 */
public final class CursorRecords {
    private static final Logger LOG = LoggerFactory.getLogger(CursorRecords.class);

    /** The log's control records, read by its own reader. */
    private final CursorBook.Log log;
    private final LogPositions positions;
    private final Path dir;
    /** Set when a cursor file could not be read: the log is read for control records from its oldest one instead. */
    private volatile boolean damaged;

    public CursorRecords(CursorBook.Log log, LogPositions positions, Path dir) {
        this.log = log;
        this.positions = positions;
        this.dir = dir;
    }

    /**
     * A cursor file, or null when it is absent or damaged. A damaged file does not keep the log from opening (its
     * records are all there): the checkpoint is only a shortcut, and without the base the cursors whose every change
     * was truncated away are missing, which is said loudly.
     */
    public CursorFile.Snapshot read(String name) {
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

    /** Whether a cursor file was found damaged. */
    public boolean damaged() {
        return damaged;
    }

    /** A checkpoint serves when it lies within what the log holds (a rewind below it deletes it). */
    public boolean usable(CursorFile.Snapshot checkpoint, long end) {
        return checkpoint != null && checkpoint.asOf() >= positions.oldestLsn() && checkpoint.asOf() <= end;
    }

    public void writeBase(long asOf, Map<String, Long> cursors) {
        try {
            CursorFile.write(dir, CursorFile.BASE, new CursorFile.Snapshot(asOf, new TreeMap<>(cursors)));
        } catch (IOException e) {
            throw new WalException("could not write " + dir.resolve(CursorFile.BASE) + ": " + e.getMessage(), e);
        }
    }

    public void writeCheckpoint(CursorFile.Snapshot snapshot) throws IOException {
        CursorFile.write(dir, CursorFile.CHECKPOINT, snapshot);
    }

    public void deleteCheckpoint() throws IOException {
        CursorFile.delete(dir, CursorFile.CHECKPOINT);
    }

    /** Applies the control records from {@code from} to {@code until} to {@code into}, in LSN order. */
    public void scanInto(Map<String, Long> into, long from, long until) {
        try (LogReader r = log.controlScanner(from, until, (lsn, payload) -> {
            ControlRecord.Cursor c = ControlRecord.decode(payload);
            if (c == null && ControlRecord.isDictionary(payload)) {
                return; // a zstd dictionary (docs/format.md, "zstd dictionaries"): nothing for cursors
            }
            if (c == null) {
                LOG.warn("Skipping the control record at {}: not one this version knows", Lsn.format(lsn));
            } else if (c.kind() == ControlRecord.CURSOR_SET) {
                into.put(c.name(), c.lsn());
            } else {
                into.remove(c.name());
            }
        })) {
            if (r.next() != null) {
                throw new IllegalStateException("a control scan returned an application's record");
            }
        }
    }
}
