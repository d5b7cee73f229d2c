package io.walden.core.internal.journal;

import io.walden.core.WalReader;
import io.walden.core.WalRecord;
import io.walden.core.internal.LogReader;
import io.walden.core.internal.ReadPath;
import io.walden.core.internal.recovery.ControlFile;
import io.walden.core.internal.segment.SegmentFiles;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes what the store journal holds back into its logs' segment files, before any log of the store opens
 * (PostgreSQL's redo, in its simplest form: every entry is a byte range of one file). After a crash a file may lack
 * bytes its log acknowledged (written, not yet forced by a checkpoint); the journal has them. Writing them again where
 * the file has them already changes nothing, so the whole journal is written back, oldest entry first.
 *
 * <p>What is skipped, and why it is safe:
 * <ul>
 *   <li>an entry of a log the store no longer has, or has under a new key (deleted, or deleted and made anew):
 *       its files are gone, or are another log's;</li>
 *   <li>an entry whose segment file is gone: the log removed that segment (retention, truncation, a rewind), and a
 *       file of that name is only ever made again after a rewind, which the next rule covers;</li>
 *   <li>the bytes from {@code L} on of an entry followed, later in the journal, by a discard of its log from
 *       {@code L} (a replica's rewind): they were removed on purpose.</li>
 * </ul>
 *
 * <p>Thread-safety: one call at a time, with no log of the store open.
 */
public final class JournalReplay {
    private static final Logger LOG = LoggerFactory.getLogger(JournalReplay.class);

    private JournalReplay() {
    }

    /**
     * Writes every entry of {@code journal} into the files of the logs in {@code dirs} (by key), then forces them.
     *
     * @return how many entries were written back
     */
    public static long replay(ReadPath journal, Map<Long, Path> dirs) throws IOException {
        Map<Long, List<long[]>> discards = discards(journal);
        Map<Path, FileChannel> files = new HashMap<>();
        Map<Path, Long> segmentSizes = new HashMap<>();
        long entries = 0;
        try (LogReader r = journal.reader(journal.oldestLsn(), WalReader.Visibility.FLUSHED)) {
            for (WalRecord rec; (rec = r.next()) != null; ) {
                if (rec.type() != StoreJournal.WRITE) {
                    continue;
                }
                ByteBuffer b = rec.payloadView().order(ByteOrder.LITTLE_ENDIAN);
                int p = b.position();
                long key = b.getLong(p);
                long lsn = b.getLong(p + 8);
                Path dir = dirs.get(key);
                if (dir == null) {
                    continue;
                }
                long end = lsn + (b.remaining() - StoreJournal.HEADER);
                for (long[] d : discards.getOrDefault(key, List.of())) {
                    if (d[0] > rec.lsn()) {
                        end = Math.min(end, d[1]);
                    }
                }
                if (end <= lsn) {
                    continue;
                }
                long segmentSize = segmentSizes.computeIfAbsent(dir, JournalReplay::segmentSize);
                long start = lsn & -segmentSize;
                FileChannel file = files.computeIfAbsent(SegmentFiles.path(dir, start), JournalReplay::openIfThere);
                if (file == null) {
                    continue;
                }
                ByteBuffer bytes = b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
                bytes.position(p + StoreJournal.HEADER).limit(p + StoreJournal.HEADER + (int) (end - lsn));
                for (long at = lsn - start; bytes.hasRemaining(); ) {
                    at += file.write(bytes, at);
                }
                entries++;
            }
        } finally {
            IOException failed = null;
            for (FileChannel f : files.values()) {
                if (f == null) {
                    continue;
                }
                try {
                    f.force(false);
                    f.close();
                } catch (IOException e) {
                    failed = failed == null ? e : failed;
                }
            }
            if (failed != null) {
                throw failed;
            }
        }
        if (entries > 0) {
            LOG.info("Wrote {} journal entries back into the store's logs ({} files)", entries, files.size());
        }
        return entries;
    }

    /** Each log's discards: the journal LSN of the discard and the log LSN it discards from. */
    private static Map<Long, List<long[]>> discards(ReadPath journal) {
        Map<Long, List<long[]>> out = new HashMap<>();
        try (LogReader r = journal.reader(journal.oldestLsn(), WalReader.Visibility.FLUSHED)) {
            for (WalRecord rec; (rec = r.next()) != null; ) {
                if (rec.type() == StoreJournal.DISCARD) {
                    ByteBuffer b = rec.payloadView().order(ByteOrder.LITTLE_ENDIAN);
                    int p = b.position();
                    out.computeIfAbsent(b.getLong(p), k -> new ArrayList<>()).add(new long[] {rec.lsn(), b.getLong(p + 8)});
                }
            }
        }
        return out;
    }

    /**
     * The log's segment size: from its control file, or, when that is missing or unreadable (the log's own open
     * rebuilds it), from a segment file's length: every segment is fully allocated.
     */
    private static long segmentSize(Path dir) {
        try (ControlFile control = ControlFile.open(dir)) {
            return control.read().segmentSize();
        } catch (IOException | RuntimeException unreadable) {
            try {
                List<Long> starts = SegmentFiles.list(dir);
                if (!starts.isEmpty()) {
                    return Files.size(SegmentFiles.path(dir, starts.get(0)));
                }
            } catch (IOException e) {
                unreadable.addSuppressed(e);
            }
            throw new java.io.UncheckedIOException(new IOException("cannot tell the segment size of the store log in "
                    + dir + " to write the journal back: " + unreadable.getMessage(), unreadable));
        }
    }

    private static FileChannel openIfThere(Path segment) {
        if (!Files.exists(segment)) {
            return null;
        }
        try {
            return FileChannel.open(segment, StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot open " + segment + " to write the journal back: " + e.getMessage(), e);
        }
    }
}
