package io.walden.core.archive;

import io.walden.core.EpochHistory;
import io.walden.core.Lsn;
import io.walden.core.WalCorruptedException;
import io.walden.core.internal.archive.ArchiveRestore;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;

/**
 * Builds a log from an archive (PostgreSQL's restore with {@code recovery_target_lsn}): the archive's oldest contiguous
 * run of segments, from its oldest segment up to {@code until} or the archive's end, every segment header and record
 * checked on the way. The log ends at the last whole record that ends at or before {@code until}: a record starting
 * at {@code until}, or straddling it, is not restored. After the last sealed segment, the head of the next one
 * ({@code .wal.partial}, the archive timeout's upload) is used when the archive has it. With a time limit the download
 * stops at the first segment whose first record is past it (times never decrease in LSN order), not at the archive's end.
 *
 * <p>Which object of a segment is read follows the newest epoch history in the archive ({@link ArchiveCatalog}): the
 * run follows that history, so an object an old primary uploaded after its epoch ended is read only up to that end,
 * and objects of other histories not at all. The restored log begins an epoch of its own at its end, numbered past every
 * epoch the archive knows (PostgreSQL's new timeline after archive recovery): archived again, its segments never take
 * the names of the history it was restored from.
 *
 * <p>The result opens like any other log: restore writes and forces the segments, cuts the tail at the record
 * boundary, writes the control file a clean shutdown would have left there, and inspects the whole log again. A
 * restore that fails removes what it wrote, so that a later open never takes half a log for a whole one.
 *
 * <p>Thread-safety: one restore per directory, on the calling thread.
 */
public final class Restore {

    /** Told as segments arrive (for progress bars). */
    public interface Listener {
        void segment(int index, int count, String name, long bytes);
    }

    /**
     * What was restored.
     *
     * @param endLsn        where the restored log ends (the next append would go there)
     * @param lastRecordLsn the LSN of the last record restored, or {@link Lsn#INVALID} when none
     * @param segments      the segment files the restored log holds (the last may hold its header alone)
     * @param fetched       the objects downloaded: with a time limit, up to the first segment whose first record is past
     *                      it, which the cut may then leave out
     * @param usedPartial   whether the head of an unsealed segment was used
     * @param archiveEnd    where the archive's contiguous run ended (beyond {@code endLsn} when cut by {@code until});
     *                      when the time limit stopped the download, as far as the run's objects reach
     * @param gapAt         the start of the first segment missing from the archive with later segments after it (the
     *                      restore stopped there), or -1 when the archive has no gap before what was asked for
     * @param history       the restored log's epoch history: the archive's, cut at the end, and an epoch of its own
     */
    public record Result(long oldestLsn, long endLsn, long lastRecordLsn, long records, int segments, int fetched,
                         boolean usedPartial, long archiveEnd, long gapAt, EpochHistory history) {
        /** True when the archive ran out, or had a gap, before {@code untilLsn}: fewer records than asked for. */
        public boolean shortOf(long untilLsn) {
            return gapAt >= 0 || (untilLsn != Long.MAX_VALUE && archiveEnd < untilLsn);
        }
    }

    private Restore() {
    }

    /**
     * Restores into {@code dataDir}, which must be empty or absent.
     *
     * @param untilLsn {@code Long.MAX_VALUE} for the whole archive
     * @throws IOException           on a store or file failure, when {@code dataDir} already holds files, or when the
     *                               archive holds nothing to restore
     * @throws WalCorruptedException when an archived segment or record fails its checks (naming the LSN)
     */
    public static Result fromArchive(ArchiveTarget from, Path dataDir, long untilLsn, Listener listener) throws IOException {
        return fromArchive(from, dataDir, untilLsn, null, listener);
    }

    /**
     * {@link #fromArchive(ArchiveTarget, Path, long, Listener)} that also stops after the last record whose time is at
     * or before {@code untilTime} (PostgreSQL's {@code recovery_target_time}; null: no time limit): the earlier of the
     * two limits wins. Records without a time (written before format 2) are older than any time.
     */
    public static Result fromArchive(ArchiveTarget from, Path dataDir, long untilLsn, Instant untilTime, Listener listener)
            throws IOException {
        return ArchiveRestore.restore(from, dataDir, untilLsn, untilTime, listener);
    }
}
