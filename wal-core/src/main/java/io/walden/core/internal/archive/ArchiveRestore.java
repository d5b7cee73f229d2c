package io.walden.core.internal.archive;

import io.walden.core.EpochHistory;
import io.walden.core.Lsn;
import io.walden.core.RecordTime;
import io.walden.core.WalCorruptedException;
import io.walden.core.archive.ArchiveCatalog;
import io.walden.core.archive.ArchiveNames;
import io.walden.core.archive.ArchiveTarget;
import io.walden.core.archive.Restore;
import io.walden.core.archive.Restore.Listener;
import io.walden.core.archive.Restore.Result;
import io.walden.core.internal.record.RecordCursor;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.recovery.ControlFile;
import io.walden.core.internal.recovery.CursorFile;
import io.walden.core.internal.recovery.HistoryFile;
import io.walden.core.internal.recovery.LogInspector;
import io.walden.core.internal.segment.SegmentFiles;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@link Restore}'s work: reads the archive's catalog, picks the run of objects its newest history reads
 * ({@link ArchiveCatalog#choose}), downloads and checks each segment, cuts the tail at the record boundary the limits
 * fall on, and writes the epoch history and the control file a clean shutdown would have left there. What it
 * guarantees is said on {@link Restore}.
 *
 * <p>Thread-safety: one restore per directory, on the calling thread.
 */
public final class ArchiveRestore {
    private static final Logger LOG = LoggerFactory.getLogger(ArchiveRestore.class);

    private ArchiveRestore() {
    }

    /** See {@link Restore#fromArchive(ArchiveTarget, Path, long, Instant, Listener)}. */
    public static Result restore(ArchiveTarget from, Path dataDir, long untilLsn, Instant untilTime, Listener listener)
            throws IOException {
        long untilMicros = untilTime == null ? Long.MAX_VALUE : RecordTime.toMicros(untilTime);
        refuseNonEmpty(dataDir);
        ArchiveCatalog catalog = ArchiveCatalog.read(from, null);
        long first = catalog.oldestStart();
        if (first < 0) {
            throw new IOException("the archive " + from.uri() + " holds no segments");
        }
        if (untilLsn < first + SegmentHeaderDescriptor.LENGTH) {
            throw new IOException("the archive " + from.uri() + " begins at " + Lsn.format(first + SegmentHeaderDescriptor.LENGTH)
                    + ", after --until " + Lsn.format(untilLsn) + ": the records before it are not archived");
        }
        EpochHistory history = catalog.history();
        long segmentSize = catalog.segmentSize();
        if (segmentSize < 0) { // an archive of one unsealed segment: its header says how large segments are
            // (a size past every epoch's start: only the object's header is read)
            segmentSize = sizeFromHeader(from, catalog.choose(history, first, Long.MAX_VALUE / 2, ArchiveNames.LEGACY));
        }
        Run run = run(catalog, history, first, segmentSize, untilLsn);
        long gapAt = -1;
        if (run.stoppedAt >= 0) {
            long later = catalog.usableAfter(history, run.stoppedAt, segmentSize, run.epoch());
            if (later >= 0) {
                gapAt = run.stoppedAt;
                LOG.warn("Segment {} is missing from the archive {}: restoring only up to it (the later segments from {} "
                        + "on cannot follow a gap)", SegmentFiles.name(gapAt), from.uri(), SegmentFiles.name(later));
            }
        }
        if (run.pieces.isEmpty()) {
            throw new IOException("the archive " + from.uri() + " holds no segment at " + SegmentFiles.name(first)
                    + " that its newest history " + history + " can read");
        }
        List<String> foreign = catalog.foreign(history);
        if (!foreign.isEmpty()) {
            LOG.warn("The archive {} holds {} objects of epochs its newest history {} does not hold (an old primary's late "
                    + "uploads, or another history): they are not read, e.g. {}", from.uri(), foreign.size(), history,
                    foreign.get(0));
        }
        Files.createDirectories(dataDir);
        try {
            return build(from, dataDir, untilLsn, untilMicros, listener, run.pieces, catalog, first, segmentSize, gapAt);
        } catch (IOException | RuntimeException e) {
            removeWhatWasWritten(dataDir); // never leave half a log that a later open would take for a whole one
            throw e;
        }
    }

    /**
     * The objects to fetch, and where the run stopped for want of an object (-1: it ended at {@code until}, a partial
     * object, or an object whose epoch ended inside its segment, the next epoch's not archived).
     */
    private record Run(List<ArchiveCatalog.Piece> pieces, long stoppedAt) {
        /** The epoch the run ended in: a later object of an older one cannot follow it. */
        int epoch() {
            return pieces.isEmpty() ? ArchiveNames.LEGACY : pieces.get(pieces.size() - 1).epoch();
        }
    }

    /** One object per segment from the oldest, contiguous, each as the history says ({@link ArchiveCatalog#choose}). */
    private static Run run(ArchiveCatalog catalog, EpochHistory history, long first, long segmentSize, long untilLsn) {
        List<ArchiveCatalog.Piece> pieces = new ArrayList<>();
        int notBelow = ArchiveNames.LEGACY;
        for (long next = first; next < untilLsn; next += segmentSize) {
            ArchiveCatalog.Piece p = catalog.choose(history, next, segmentSize, notBelow);
            if (p == null) {
                return new Run(pieces, next);
            }
            pieces.add(p);
            notBelow = p.epoch();
            if (p.partial() || p.usableEnd() < next + segmentSize) {
                break;
            }
        }
        return new Run(pieces, -1);
    }

    private static Result build(ArchiveTarget from, Path dataDir, long untilLsn, long untilMicros, Listener listener,
                                List<ArchiveCatalog.Piece> run, ArchiveCatalog catalog, long first, long segmentSize,
                                long gapAt) throws IOException {
        long logId = 0;
        int fetched = 0;
        while (fetched < run.size()) {
            ArchiveCatalog.Piece p = run.get(fetched);
            listener.segment(fetched++, run.size(), p.name(), p.partial() ? p.size() : segmentSize);
            logId = fetch(from, p.name(), dataDir, p.start(), segmentSize, logId, p.partial());
            if (untilMicros != Long.MAX_VALUE && firstTime(SegmentFiles.path(dataDir, p.start())) > untilMicros) {
                // Times never decrease in LSN order (docs/format.md, "Records"): every record of the later segments is
                // past the time too, so the log ends in this segment or the one before, and none of them is fetched.
                break;
            }
        }
        ArchiveCatalog.Piece last = run.get(fetched - 1);
        // The last object may be one whose epoch ended inside it (an old primary's): read only up to that end.
        boolean epochEnded = last.usableEnd() < last.start() + (last.partial() ? last.size() : segmentSize);
        Cut cut = inspectAndCut(dataDir, segmentSize, epochEnded ? Math.min(untilLsn, last.usableEnd()) : untilLsn,
                untilMicros);
        long archiveEnd = fetched < run.size() ? reach(run.get(run.size() - 1), segmentSize)
                : epochEnded ? Math.min(cut.archiveEnd, last.usableEnd()) : cut.archiveEnd;
        EpochHistory restored = catalog.history().next(cut.end, catalog.history().current().number() + 1);
        HistoryFile.write(dataDir, restored, true);
        // The control file a clean shutdown would have left: everything restored is forced, so its flushed LSN is the
        // end, and damage found below it by a later open is corruption, never a torn tail to cut.
        List<Long> kept = SegmentFiles.list(dataDir);
        long oldest = kept.get(0);
        try (ControlFile control = ControlFile.create(dataDir, new ControlFile.Checkpoint(logId, segmentSize, oldest,
                oldest == 0 ? Lsn.INVALID : -1, cut.end, true, Long.MAX_VALUE))) {
            SegmentFiles.forceDirectory(dataDir);
        }
        LogInspector.Result check = new LogInspector(dataDir).inspect(new LogInspector.Visitor() {
        });
        if (!check.clean() || check.endLsn() != cut.end) {
            throw new IOException("the restored log in " + dataDir + " does not inspect clean (end " + Lsn.format(check.endLsn())
                    + ", restored to " + Lsn.format(cut.end) + "): " + check.problem());
        }
        return new Result(first + SegmentHeaderDescriptor.LENGTH, cut.end, cut.lastRecord, cut.records,
                kept.size(), fetched, last.partial() && kept.contains(last.start()), archiveEnd, gapAt, restored);
    }

    /** How far an object's bytes reach in the log, as the catalog lists it (its records unread). */
    private static long reach(ArchiveCatalog.Piece p, long segmentSize) {
        return Math.min(p.usableEnd(), p.start() + (p.partial() ? p.size() : segmentSize));
    }

    /**
     * The time of the first timed record of a fetched segment file, or {@link RecordCursor#NO_TIME} when it holds none
     * (format 1's records, or padding alone): such a segment is older than any time, and the restore goes on.
     */
    private static long firstTime(Path segment) throws IOException {
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.READ)) {
            ByteBuffer view = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size()).order(ByteOrder.LITTLE_ENDIAN);
            long at = RecordCursor.firstTimed(view, SegmentHeaderDescriptor.LENGTH, view.capacity(), Long.MIN_VALUE);
            return at < 0 ? RecordCursor.NO_TIME : view.getLong((int) at + RecordDescriptor.TIME_OFFSET);
        }
    }

    private static void removeWhatWasWritten(Path dataDir) {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dataDir)) {
            for (Path p : files) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            LOG.error("Could not clean up the failed restore in {}: {}; delete the directory before retrying", dataDir,
                    e.toString());
        }
    }

    private static void refuseNonEmpty(Path dataDir) throws IOException {
        if (!Files.exists(dataDir)) {
            return;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dataDir)) {
            if (files.iterator().hasNext()) {
                throw new IOException("refusing to restore into " + dataDir + ": it is not empty (restore builds a new "
                        + "log; move the old one away first)");
            }
        }
    }

    /** Downloads one object as a segment file, checking its header; returns the log id (the first segment's). */
    private static long fetch(ArchiveTarget from, String name, Path dataDir, long start, long segmentSize, long logId,
                              boolean partial) throws IOException {
        Path temp = dataDir.resolve(SegmentFiles.name(start) + SegmentFiles.TEMP_SUFFIX);
        if (!from.get(name, temp)) {
            throw new IOException("object " + name + " vanished from the archive " + from.uri() + " during the restore");
        }
        try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long size = ch.size();
            if (partial ? size < SegmentHeaderDescriptor.LENGTH || size > segmentSize : size != segmentSize) {
                throw new WalCorruptedException("archived " + name + " is " + size + " bytes long; a segment is "
                        + segmentSize, start, dataDir);
            }
            ByteBuffer header = ByteBuffer.allocate(SegmentHeaderDescriptor.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(header, 0);
            header.flip();
            String problem = SegmentHeaderDescriptor.validate(header.duplicate().order(ByteOrder.LITTLE_ENDIAN), segmentSize,
                    start, logId);
            if (problem != null) {
                throw new WalCorruptedException("archived " + name + ": " + problem, start, dataDir);
            }
            if (partial) {
                SegmentFiles.writeZeros(ch, size, segmentSize); // fully allocated, as every segment (docs/format.md)
            }
            ch.force(true);
            if (logId == 0) {
                logId = header.getLong(SegmentHeaderDescriptor.LOG_ID_OFFSET);
            }
        }
        SegmentFiles.rename(dataDir, temp, SegmentFiles.path(dataDir, start));
        return logId;
    }

    private static long sizeFromHeader(ArchiveTarget from, ArchiveCatalog.Piece piece) throws IOException {
        if (piece == null) {
            throw new IOException("the archive " + from.uri() + " holds no segment its history can read");
        }
        Path temp = Files.createTempFile("walden-header", SegmentFiles.TEMP_SUFFIX);
        try {
            from.get(piece.name(), temp);
            try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.READ)) {
                ByteBuffer header = ByteBuffer.allocate(SegmentHeaderDescriptor.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
                ch.read(header, 0);
                return header.getLong(SegmentHeaderDescriptor.SEGMENT_SIZE_OFFSET);
            }
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    /** Where the restored log ends, and what it holds. */
    private record Cut(long end, long lastRecord, long records, long archiveEnd) {
    }

    /** Walks every record (failing on the first bad one) and cuts the log after the last record ending at or before until. */
    private static Cut inspectAndCut(Path dataDir, long segmentSize, long untilLsn, long untilMicros) throws IOException {
        long[] kept = {Lsn.INVALID, 0, -1, 0}; // last record's LSN, records kept, end of the last record kept, cursor changes
        LogInspector.Result walk = LogInspector.segmentsOnly(dataDir).inspect(new LogInspector.Visitor() {
            @Override
            public boolean onRecord(LogInspector.RecordInfo r) {
                long end = r.lsn() + RecordDescriptor.aligned(r.length());
                if (end > untilLsn || (r.time() != RecordCursor.NO_TIME && r.time() > untilMicros)) {
                    return false; // the first record past either limit, and every later one, is left out
                }
                if (r.control()) {
                    kept[3]++;
                } else if (!r.padding()) {
                    kept[0] = r.lsn();
                    kept[1]++;
                }
                kept[2] = end;
                return true;
            }
        });
        if (walk.problem() != null) {
            throw new WalCorruptedException("the archive does not restore cleanly: " + walk.problem(), walk.problemLsn(),
                    dataDir);
        }
        long end = walk.endLsn();
        if (kept[2] < 0) {
            end = walk.oldestLsn(); // until falls inside the first record: nothing before it is whole
        } else if (kept[2] < end) {
            end = kept[2]; // cut by until: the walk went on past it
        }
        if (end % segmentSize == 0) {
            end += SegmentHeaderDescriptor.LENGTH; // after a segment's closing record: the next segment's first record
        }
        long cutSegment = end / segmentSize * segmentSize;
        for (long start : SegmentFiles.list(dataDir)) {
            Path file = SegmentFiles.path(dataDir, start);
            if (start > cutSegment) {
                SegmentFiles.delete(dataDir, file);
            } else if (start == cutSegment) {
                try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                    SegmentFiles.writeZeros(ch, end - start, segmentSize);
                    ch.force(true);
                }
            }
        }
        if (kept[3] > 0) {
            // Cursor changes were restored: an empty base as of the oldest record makes the first open rebuild the
            // cursors from them (changes made before the archive's oldest segment are not in the archive).
            CursorFile.write(dataDir, CursorFile.BASE, new CursorFile.Snapshot(walk.oldestLsn(), Map.of()));
        }
        SegmentFiles.forceDirectory(dataDir);
        return new Cut(end, kept[0], kept[1], walk.endLsn());
    }
}
