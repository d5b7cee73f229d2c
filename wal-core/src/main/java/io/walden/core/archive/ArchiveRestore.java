package io.walden.core.archive;

import io.walden.core.Lsn;
import io.walden.core.WalCorruptedException;
import io.walden.core.record.RecordDescriptor;
import io.walden.core.recovery.ControlFile;
import io.walden.core.recovery.CursorFile;
import io.walden.core.recovery.LogInspector;
import io.walden.core.segment.SegmentFiles;
import io.walden.core.segment.SegmentHeaderDescriptor;
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
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * Builds a log from an archive (PostgreSQL's restore with {@code recovery_target_lsn}): the archive's oldest contiguous
 * run of segments, from its oldest segment up to {@code until} or the archive's end, every segment header and record
 * checked on the way. The log ends at the last whole record that ends at or before {@code until}: a record starting
 * at {@code until}, or straddling it, is not restored. After the last sealed segment, the head of the next one
 * ({@code .wal.partial}, the archive timeout's upload) is used when the archive has it.
 *
 * <p>The result opens like any other log: restore writes and forces the segments, cuts the tail at the record
 * boundary, writes the control file a clean shutdown would have left there, and inspects the whole log again.
 *
 * <p>Thread-safety: one restore per directory, on the calling thread.
 */
public final class ArchiveRestore {
    private static final Logger LOG = LoggerFactory.getLogger(ArchiveRestore.class);

    /** Told as segments arrive (for progress bars). */
    public interface Listener {
        void segment(int index, int count, String name, long bytes);
    }

    /**
     * What was restored.
     *
     * @param endLsn        where the restored log ends (the next append would go there)
     * @param lastRecordLsn the LSN of the last record restored, or {@link Lsn#INVALID} when none
     * @param usedPartial   whether the head of an unsealed segment was used
     * @param archiveEnd    where the archive's contiguous run ended (beyond {@code endLsn} when cut by {@code until})
     * @param gapAt         the start of the first segment missing from the archive with later segments after it (the
     *                      restore stopped there), or -1 when the archive has no gap before what was asked for
     */
    public record Result(long oldestLsn, long endLsn, long lastRecordLsn, long records, int segments, boolean usedPartial,
                         long archiveEnd, long gapAt) {
        /** True when the archive ran out, or had a gap, before {@code untilLsn}: fewer records than asked for. */
        public boolean shortOf(long untilLsn) {
            return gapAt >= 0 || (untilLsn != Long.MAX_VALUE && archiveEnd < untilLsn);
        }
    }

    private ArchiveRestore() {
    }

    /**
     * Restores into {@code dataDir}, which must be empty or absent.
     *
     * @param untilLsn {@code Long.MAX_VALUE} for the whole archive
     * @throws IOException           on a store or file failure, or when {@code dataDir} already holds files
     * @throws WalCorruptedException when an archived segment or record fails its checks (naming the LSN)
     */
    public static Result restore(ArchiveTarget from, Path dataDir, long untilLsn, Listener listener) throws IOException {
        refuseNonEmpty(dataDir);
        TreeMap<Long, Long> full = new TreeMap<>();
        TreeMap<Long, Long> partial = new TreeMap<>();
        for (ArchiveTarget.StoredObject o : from.list()) {
            long start = ArchiveNames.startOf(o.name());
            if (start < 0) {
                continue;
            }
            (o.name().endsWith(ArchiveNames.PARTIAL_SUFFIX) ? partial : full).put(start, o.size());
        }
        if (full.isEmpty() && partial.isEmpty()) {
            throw new IOException("the archive " + from.uri() + " holds no segments");
        }
        long first = full.isEmpty() ? partial.firstKey() : full.firstKey();
        if (untilLsn < first + SegmentHeaderDescriptor.LENGTH) {
            throw new IOException("the archive " + from.uri() + " begins at " + Lsn.format(first + SegmentHeaderDescriptor.LENGTH)
                    + ", after --until " + Lsn.format(untilLsn) + ": the records before it are not archived");
        }
        long segmentSize = full.isEmpty() ? -1 : full.firstEntry().getValue();
        // The run to fetch: contiguous sealed segments from the oldest, then at most one partial after them.
        List<Long> sealed = new ArrayList<>();
        long next = first;
        while (full.containsKey(next) && next < untilLsn) {
            sealed.add(next);
            next += segmentSize;
        }
        Long partialStart = partial.containsKey(next) && next < untilLsn ? next : null;
        long gapAt = -1;
        if (full.containsKey(next) && next >= untilLsn) {
            partialStart = null;
        } else if (!full.containsKey(next) && full.higherKey(next) != null) {
            gapAt = next;
            LOG.warn("Segment {} is missing from the archive {}: restoring only up to it (the later segments {} .. {} "
                            + "cannot follow a gap)", SegmentFiles.name(next), from.uri(), SegmentFiles.name(full.higherKey(next)),
                    SegmentFiles.name(full.lastKey()));
        }
        int count = sealed.size() + (partialStart == null ? 0 : 1);
        Files.createDirectories(dataDir);
        try {
            return build(from, dataDir, untilLsn, listener, sealed, partialStart, partial, first, segmentSize, count, gapAt);
        } catch (IOException | RuntimeException e) {
            removeWhatWasWritten(dataDir); // never leave half a log that a later open would take for a whole one
            throw e;
        }
    }

    private static Result build(ArchiveTarget from, Path dataDir, long untilLsn, Listener listener, List<Long> sealed,
                                Long partialStart, TreeMap<Long, Long> partial, long first, long segmentSize, int count,
                                long gapAt) throws IOException {
        long logId = 0;
        int index = 0;
        for (long start : sealed) {
            listener.segment(index++, count, SegmentFiles.name(start), segmentSize);
            logId = fetch(from, ArchiveNames.segment(start), dataDir, start, segmentSize, logId, false);
        }
        if (partialStart != null) {
            if (segmentSize < 0) { // an archive of one unsealed segment: its header says how large segments are
                segmentSize = sizeFromHeader(from, ArchiveNames.partial(partialStart), dataDir);
            }
            listener.segment(index, count, ArchiveNames.partial(partialStart), partial.get(partialStart));
            logId = fetch(from, ArchiveNames.partial(partialStart), dataDir, partialStart, segmentSize, logId, true);
        }
        long archiveEnd = sealed.isEmpty() && partialStart == null ? first : -1;
        Cut cut = inspectAndCut(dataDir, segmentSize, untilLsn);
        archiveEnd = Math.max(archiveEnd, cut.archiveEnd);
        // The control file a clean shutdown would have left: everything restored is forced, so its flushed LSN is the
        // end, and damage found below it by a later open is corruption, never a torn tail to cut.
        long oldest = SegmentFiles.list(dataDir).get(0);
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
        return new Result(first + SegmentHeaderDescriptor.LENGTH, cut.end, cut.lastRecord, cut.records, count,
                partialStart != null, archiveEnd, gapAt);
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

    private static long sizeFromHeader(ArchiveTarget from, String name, Path dataDir) throws IOException {
        Path temp = dataDir.resolve("header" + SegmentFiles.TEMP_SUFFIX);
        try {
            from.get(name, temp);
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
    private static Cut inspectAndCut(Path dataDir, long segmentSize, long untilLsn) throws IOException {
        long[] kept = {Lsn.INVALID, 0, -1, 0}; // last record's LSN, records kept, end of the last record kept, cursor changes
        LogInspector.Result walk = LogInspector.segmentsOnly(dataDir).inspect(new LogInspector.Visitor() {
            @Override
            public boolean onRecord(LogInspector.RecordInfo r) {
                long end = r.lsn() + RecordDescriptor.aligned(r.length());
                if (end > untilLsn) {
                    return false;
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
            CursorFile.write(dataDir, CursorFile.BASE, new CursorFile.Snapshot(walk.oldestLsn(), java.util.Map.of()));
        }
        SegmentFiles.forceDirectory(dataDir);
        return new Cut(end, kept[0], kept[1], walk.endLsn());
    }
}
