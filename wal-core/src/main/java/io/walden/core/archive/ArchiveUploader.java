package io.walden.core.archive;

import io.walden.core.Lsn;
import io.walden.core.SegmentInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One upload per turn: the oldest segment that needs it, sealed or (after {@link ArchiveConfig#timeout()}) its flushed
 * head, and the retry policy around it. It guarantees that a sealed segment is counted archived only once
 * {@link ArchiveTarget#put} verified the object and the {@code .done} marker is durable, that a failure is retried after
 * a backoff doubling from {@link ArchiveConfig#retryMin()} to {@link ArchiveConfig#retryMax()}, and that after a
 * promotion the archive past the new epoch's start is archived again (the old primary's objects there deleted).
 *
 * <p>Thread-safety: the archiver's thread alone (made by the {@link Archiver}'s constructor, before that thread starts).
 */
final class ArchiveUploader {
    /** The archiver's messages, wherever the code is that logs them. */
    private static final Logger LOG = LoggerFactory.getLogger(Archiver.class);

    private final ArchivedLog log;
    private final ArchiveConfig config;
    private final ArchiveTarget target;
    private final ArchiveStatus status;
    private final ArchiveProgress progress;

    private boolean seenReplica;
    /** The start of the epoch the last primary turn saw; -1 before the first. */
    private long knownEpochStart = -1;
    private long tailPendingSince;
    private long backoffNanos;
    private int failuresInARow;
    private long nextAttemptNanos;

    ArchiveUploader(ArchivedLog log, ArchiveConfig config, ArchiveStatus status, ArchiveProgress progress) {
        this.log = log;
        this.config = config;
        this.target = config.target();
        this.status = status;
        this.progress = progress;
        this.seenReplica = !log.acceptsAppends(); // a replica's log (its read limit is set from the control file)
    }

    /** False while a failure's backoff lasts. */
    boolean due() {
        return System.nanoTime() - nextAttemptNanos >= 0;
    }

    /** One upload, if one is due; true when there may be more. A failure backs off before the next attempt. */
    boolean attempt() {
        try {
            boolean uploaded = uploadNext();
            if (uploaded) {
                backoffNanos = 0;
                failuresInARow = 0;
                progress.uploadSucceeded();
            }
            return uploaded;
        } catch (IOException | RuntimeException e) {
            String error = e.getMessage() == null ? e.toString() : e.getMessage();
            progress.uploadFailed(error);
            failuresInARow++;
            backoffNanos = backoffNanos == 0 ? config.retryMin().toNanos()
                    : Math.min(config.retryMax().toNanos(), backoffNanos * 2);
            nextAttemptNanos = System.nanoTime() + backoffNanos;
            LOG.warn("Archiving to {} failed ({} in a row; retrying in {} ms): {}", target.uri(), failuresInARow,
                    TimeUnit.NANOSECONDS.toMillis(backoffNanos), error);
            return false;
        }
    }

    /** Uploads the oldest segment that needs it; true when it did (there may be more). */
    private boolean uploadNext() throws IOException {
        if (!log.acceptsAppends()) {
            seenReplica = true;
            return false;
        }
        long epochStart = log.epochStartLsn();
        if (epochStart != knownEpochStart) {
            // A new epoch since the last turn (a promotion, however quick), or the first turn of a log that was a
            // replica: the archive may hold another history from the epoch's start on.
            if (knownEpochStart >= 0 || seenReplica) {
                adoptArchiveAfterPromotion();
            }
            knownEpochStart = epochStart;
        }
        long flushed = log.flushedLsn();
        for (SegmentInfo s : log.segments()) {
            long start = s.startLsn();
            if (status.isSettled(start)) {
                continue;
            }
            if (flushed >= s.endLsn()) { // sealed: every byte of it is durable and nothing writes it again
                target.put(ArchiveNames.segment(start), s.path(), s.size());
                status.markDone(start);
                progress.segmentArchived(start);
                LOG.debug("Archived segment {}", ArchiveNames.segment(start));
                deleteQuietly(ArchiveNames.partial(start));
                return true;
            }
            return uploadTail(s, flushed);
        }
        return false;
    }

    /**
     * This log was a replica and is a primary now. Below its epoch's start its segments are byte for byte the old
     * primary's, which archived them: an object of the same name and size is taken as this segment's (so a failover
     * does not re-upload, nor count as pending, everything the replica kept). From the segment holding the epoch's
     * start on, the archive may hold the old primary's bytes, which this epoch replaces: those objects are deleted
     * and the segments archived again as they seal.
     */
    private void adoptArchiveAfterPromotion() throws IOException {
        long from = log.epochStartLsn() / log.segmentSize() * log.segmentSize();
        status.forgetFrom(from);
        progress.forgetPartial();
        Map<String, Long> stored = new HashMap<>();
        for (ArchiveTarget.StoredObject o : target.list()) {
            long start = ArchiveNames.startOf(o.name());
            if (start >= from) {
                target.delete(o.name()); // the old primary's history past this epoch's start
            } else if (start >= 0) {
                stored.put(o.name(), o.size());
            }
        }
        int adopted = 0;
        for (SegmentInfo s : log.segments()) {
            if (s.startLsn() < from && !status.isSettled(s.startLsn())
                    && Long.valueOf(s.size()).equals(stored.get(ArchiveNames.segment(s.startLsn())))) {
                status.markDone(s.startLsn());
                adopted++;
            }
        }
        LOG.info("Promoted: {} segments below {} were archived by the old primary; segments from {} on are archived "
                + "again (the old primary's objects there were deleted)", adopted, Lsn.format(from), ArchiveNames.segment(from));
    }

    /** The current segment: its flushed head goes up once records have waited the archive timeout; true when it did. */
    private boolean uploadTail(SegmentInfo s, long flushed) throws IOException {
        long timeout = config.timeout().toNanos();
        long start = s.startLsn();
        long archivedEnd = progress.headArchivedTo(start);
        if (timeout == 0 || flushed <= archivedEnd) {
            tailPendingSince = 0;
            return false;
        }
        long now = System.nanoTime();
        if (tailPendingSince == 0) {
            tailPendingSince = now;
        }
        if (now - tailPendingSince < timeout) {
            return false;
        }
        target.put(ArchiveNames.partial(start), s.path(), flushed - start);
        progress.partialArchived(start, flushed);
        tailPendingSince = 0;
        LOG.debug("Archived the head of segment {} up to {}", ArchiveNames.segment(start), Lsn.format(flushed));
        return true;
    }

    private void deleteQuietly(String name) {
        try {
            target.delete(name);
        } catch (IOException e) {
            LOG.debug("Could not delete {} from the archive (the sealed segment replaces it anyway): {}", name, e.getMessage());
        }
    }
}
