package io.walden.replication.replica;

import io.walden.core.EpochHistory;
import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.core.WalException;
import io.walden.core.archive.ArchiveCatalog;
import io.walden.core.archive.ArchiveNames;
import io.walden.core.archive.ArchiveTarget;
import io.walden.core.replication.WriteStage;
import io.walden.core.internal.segment.SegmentFiles;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Fetches from the archive what the primary no longer keeps (PostgreSQL's {@code restore_command} on a standby): from
 * this log's end, each archived segment (or, last, the head of one that was not sealed), chosen as this log's epoch
 * history says ({@link ArchiveCatalog}: never an object of a history it does not follow, nor past where the history ends
 * the object's epoch), is applied as if it had been
 * streamed, through a {@link WriteStage} (record by record checked), then forced. Archived bytes had been flushed by
 * the primary before they were archived, so readers may see them at once.
 *
 * <p>Thread-safety: runs on the replica's receiver thread, which alone applies bytes to the log.
 */
final class ArchiveCatchUp {
    private static final Logger LOG = LoggerFactory.getLogger(ArchiveCatchUp.class);

    /** Records are read in chunks of this size: the memory a catch-up takes, whatever the segment size. */
    static final int CHUNK_BYTES = 1 << 20;

    private final Wal wal;
    private final WriteStage writes;
    private final ArchiveTarget archive;
    private final int chunkBytes;

    ArchiveCatchUp(Wal wal, ArchiveTarget archive) {
        this(wal, archive, CHUNK_BYTES);
    }

    ArchiveCatchUp(Wal wal, ArchiveTarget archive, int chunkBytes) {
        this.wal = wal;
        this.writes = wal.replication().writeStage();
        this.archive = archive;
        this.chunkBytes = chunkBytes;
    }

    /**
     * Applies what the archive holds from the log's end on; returns the bytes applied (0: the archive has nothing
     * after this log's end).
     *
     * @throws IOException  when the archive fails, or holds a segment of another log
     * @throws WalException when an archived record fails its checks (nothing of that segment is kept)
     */
    long run() throws IOException {
        long segmentSize = wal.config().segmentSize();
        Path temp = wal.directory().resolve("archive-fetch" + SegmentFiles.TEMP_SUFFIX); // removed at open if left
        ArchiveCatalog catalog = ArchiveCatalog.read(archive, wal.directory());
        EpochHistory follow = historyToFollow(catalog.history());
        long total = 0;
        try {
            while (true) {
                long end = wal.insertLsn();
                long start = end / segmentSize * segmentSize;
                ArchiveCatalog.Piece piece = catalog.choose(follow, start, segmentSize, ArchiveNames.LEGACY);
                if (piece == null || !archive.get(piece.name(), temp)) {
                    break;
                }
                long applied = apply(temp, start, end, piece.name(), piece.usableEnd());
                total += applied;
                if (piece.partial() || applied == 0 || piece.usableEnd() < start + segmentSize) {
                    break; // the archive's end, or an epoch's end this history goes on from elsewhere
                }
            }
        } finally {
            Files.deleteIfExists(temp);
        }
        if (total > 0) {
            LOG.info("Fetched {} bytes from the archive {}: this replica's log now ends at {}", total, archive.uri(),
                    Lsn.format(wal.insertLsn()));
        }
        return total;
    }

    /**
     * The history the archive is read by. This log's own may be older than the archive's: its primary refused it (the
     * LSN was removed) before telling it of a promotion, and in its own history its epoch never ends, so an old
     * primary's late copy of a segment would be read whole. A newer archived history this log can follow is adopted,
     * durably, before anything of it is applied (PostgreSQL's recovery_target_timeline = latest); one it cannot follow
     * (it holds records past where its epoch ended there) is still what the archive is read by, so that nothing past
     * that end is applied, and the primary's next answer rewinds it.
     */
    private EpochHistory historyToFollow(EpochHistory archived) {
        EpochHistory own = wal.status().history();
        if (archived.current().number() <= own.current().number()) {
            return own;
        }
        long end = wal.insertLsn();
        if (archived.divergence(own.at(end), end) == null) {
            wal.replication().adoptHistory(archived);
            LOG.info("Adopted the archive's epoch history {} before fetching from {}", archived, archive.uri());
        }
        return archived;
    }

    /** Applies the archived file's records from {@code end}, below {@code usableEnd} only (where its epoch ends). */
    private long apply(Path file, long start, long end, String name, long usableEnd) throws IOException {
        long applied = writes.writeArchived(file, name + " in " + archive.uri(), start, end, usableEnd, chunkBytes);
        if (applied > 0) {
            wal.replication().raiseReadLimit(wal.insertLsn()); // the primary had flushed it before archiving it
        }
        return applied;
    }
}
