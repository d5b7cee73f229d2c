package io.walden.core.internal.archive;

import io.walden.core.Epoch;
import io.walden.core.EpochHistory;
import io.walden.core.Lsn;
import io.walden.core.SegmentInfo;
import io.walden.core.archive.ArchiveConfig;
import io.walden.core.archive.ArchiveNames;
import io.walden.core.archive.ArchiveTarget;
import io.walden.core.internal.recovery.HistoryFile;
import io.walden.core.internal.segment.SegmentFiles;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One upload per turn: the oldest segment that needs it, sealed or (after {@link ArchiveConfig#timeout()}) its flushed
 * head, and the retry policy around it. It guarantees that a sealed segment is counted archived only once
 * {@link ArchiveTarget#put} verified the object and the {@code .done} marker is durable, that a failure is retried after
 * a backoff doubling from {@link ArchiveConfig#retryMin()} to {@link ArchiveConfig#retryMax()}, that an epoch's
 * history is in the archive before any object named by that epoch (PostgreSQL archives its timeline history file at
 * the promotion), and that after a promotion the segments from the new epoch's start are archived again under the
 * new epoch's names (the old primary's objects stay, under its epoch's: {@link ArchiveCatalog} reads them only as far
 * as that epoch lasted).
 *
 * <p>Thread-safety: the archiver's thread alone (made by the {@link Archiver}'s constructor, before that thread starts).
 */
public final class ArchiveUploader {
    /** The archiver's messages, wherever the code is that logs them. */
    private static final Logger LOG = LoggerFactory.getLogger(Archiver.class);

    private final ArchivedLog log;
    private final ArchiveConfig config;
    private final ArchiveTarget target;
    private final ArchiveStatus status;
    private final ArchiveProgress progress;

    private boolean seenReplica;
    /** The epoch the last primary turn saw; null before the first. */
    private Epoch knownEpoch;
    /** The epoch whose history is in the archive (checked or uploaded by this process); 0 before the first. */
    private int historyArchived;
    /** The name the current segment's head went up under (its epoch's), deleted once the segment is sealed. */
    private String partialName;
    private long tailPendingSince;
    private long backoffNanos;
    private int failuresInARow;
    private long nextAttemptNanos;
    private long lastFailureNanos;
    /** The longest wait between two attempts while the cap blocks appends ({@link #due}). */
    static final long BLOCKED_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    public ArchiveUploader(ArchivedLog log, ArchiveConfig config, ArchiveStatus status, ArchiveProgress progress) {
        this.log = log;
        this.config = config;
        this.target = config.target();
        this.status = status;
        this.progress = progress;
        this.seenReplica = !log.acceptsAppends(); // a replica's log (its read limit is set from the control file)
    }

    /**
     * False while a failure's backoff lasts, but never longer than {@link #BLOCKED_RETRY_NANOS} while
     * {@code appendsBlocked}: then every client of the log is refused until an upload succeeds, so a store that came
     * back must be found within a second, not at the end of a backoff grown to {@link ArchiveConfig#retryMax()}. A
     * failed attempt a second costs little next to an outage of the log's writes.
     */
    public boolean due(boolean appendsBlocked) {
        long now = System.nanoTime();
        return now - nextAttemptNanos >= 0 || (appendsBlocked && now - lastFailureNanos >= BLOCKED_RETRY_NANOS);
    }

    /** One upload, if one is due; true when there may be more. A failure backs off before the next attempt. */
    public boolean attempt() {
        try {
            boolean uploaded = uploadNext();
            if (uploaded) {
                backoffNanos = 0;
                failuresInARow = 0;
                // The store answers again: the last failure's due time must go with its backoff. Kept, it held the
                // next upload back once the cap released appends (due(false) reads it alone), and while appends were
                // blocked each second's failed attempt had doubled it up to retryMax: the segments still pending then
                // waited up to 30 s after the store's return (ArchiveIT's refusing store: 5-11 s alone, 63 s loaded).
                nextAttemptNanos = System.nanoTime();
                progress.uploadSucceeded();
            }
            return uploaded;
        } catch (IOException | RuntimeException e) {
            String error = e.getMessage() == null ? e.toString() : e.getMessage();
            progress.uploadFailed(error);
            failuresInARow++;
            backoffNanos = backoffNanos == 0 ? config.retryMin().toNanos()
                    : Math.min(config.retryMax().toNanos(), backoffNanos * 2);
            lastFailureNanos = System.nanoTime();
            nextAttemptNanos = lastFailureNanos + backoffNanos;
            LOG.warn("Archiving to {} failed ({} in a row; retrying in {} ms): {}", target.uri(), failuresInARow,
                    TimeUnit.NANOSECONDS.toMillis(backoffNanos), error);
            return false;
        }
    }

    /** Uploads the epoch's history or the oldest segment that needs it; true when it did (there may be more). */
    private boolean uploadNext() throws IOException {
        if (!log.acceptsAppends()) {
            seenReplica = true;
            return false;
        }
        EpochHistory history = log.history();
        if (!history.current().equals(knownEpoch)) {
            // A new epoch since the last turn (a promotion, however quick), or the first turn of a log that was a
            // replica: the archive may hold another history from the epoch's start on.
            if (knownEpoch != null || seenReplica) {
                adoptArchiveAfterPromotion(history);
            } else {
                checkForAGap(listed()); // a primary's first turn: a gap found before a restart is said again
            }
            knownEpoch = history.current();
        }
        if (historyArchived != history.current().number()) {
            boolean uploaded = archiveHistory(history);
            historyArchived = history.current().number();
            if (uploaded) {
                return true;
            }
        }
        long flushed = log.flushedLsn();
        for (SegmentInfo s : log.segments()) {
            long start = s.startLsn();
            if (status.isSettled(start)) {
                continue;
            }
            if (flushed >= s.endLsn()) { // sealed: every byte of it is durable and nothing writes it again
                int epoch = history.at(s.endLsn()).number();
                String name = ArchiveNames.segment(epoch, start);
                target.put(name, s.path(), s.size());
                status.markDone(start);
                progress.segmentArchived(start);
                LOG.debug("Archived segment {} as {}", SegmentFiles.name(start), name);
                // The sealed object replaces its head's: the one this process put, or (after a restart) its epoch's.
                String partial = ArchiveNames.partial(epoch, start);
                deleteQuietly(partial);
                if (partialName != null && ArchiveNames.parse(partialName).start() == start) {
                    if (!partialName.equals(partial)) {
                        deleteQuietly(partialName);
                    }
                    partialName = null;
                }
                return true;
            }
            return uploadTail(s, flushed, history);
        }
        return false;
    }

    /**
     * Puts the history of the current epoch as {@code EEEEEEEE.history}, before any object named by that epoch. An
     * object of that name holding another history means another log (or a rival promotion) archives here: refused,
     * retried, and shown as the archive's last error, rather than mixing two histories under one name. Epoch 1 needs
     * none (an archive without histories is in epoch 1).
     *
     * @return whether it uploaded the history (false: epoch 1, or the archive had it)
     */
    private boolean archiveHistory(EpochHistory history) throws IOException {
        int epoch = history.current().number();
        if (epoch == 1) {
            return false;
        }
        String name = ArchiveNames.history(epoch);
        Path temp = log.directory().resolve("archive-history" + SegmentFiles.TEMP_SUFFIX); // removed at open if left
        try {
            if (target.get(name, temp)) {
                EpochHistory stored = HistoryFile.parse(Files.readAllBytes(temp), target.uri() + "/" + name, null).history();
                if (!stored.equals(history)) {
                    throw new IOException("the archive " + target.uri() + " holds another history as " + name + ": " + stored
                            + ", not this log's " + history + " (another log, or a rival promotion, archives there)");
                }
                return false;
            }
            byte[] text = HistoryFile.format(history, false);
            Files.write(temp, text);
            target.put(name, temp, text.length);
            LOG.info("Archived the history of epoch {} as {}: {}", epoch, name, history);
            return true;
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    /**
     * This log was a replica and is a primary now. Below its epoch's start its segments are byte for byte the old
     * primary's, which archived them: an object of the same name (the same epoch, or an old unnamed one) and size is
     * taken as this segment's (so a failover does not re-upload, nor count as pending, everything the replica kept).
     * From the segment holding the epoch's start on, this log's segments are archived again as they seal, under the
     * new epoch's names; the old primary's objects there stay under its epoch's, harmless ({@link ArchiveCatalog}).
     */
    private void adoptArchiveAfterPromotion(EpochHistory history) throws IOException {
        long from = history.current().startLsn() / log.segmentSize() * log.segmentSize();
        status.forgetFrom(from);
        progress.forgetPartial();
        partialName = null;
        Map<String, Long> stored = listed();
        int adopted = 0;
        for (SegmentInfo s : log.segments()) {
            long start = s.startLsn();
            if (start >= from || status.isSettled(start)) {
                continue;
            }
            Long size = stored.get(ArchiveNames.segment(history.at(s.endLsn()).number(), start));
            if (size == null) {
                size = stored.get(SegmentFiles.name(start)); // archived before objects were named by epoch
            }
            if (Long.valueOf(s.size()).equals(size)) {
                status.markDone(start);
                adopted++;
            }
        }
        LOG.info("Promoted: {} segments below {} were archived by the old primary; segments from {} on are archived "
                + "again, as epoch {}", adopted, Lsn.format(from), SegmentFiles.name(from), history.current().number());
        checkForAGap(stored);
    }

    /** The archive's objects, by name, with their sizes. */
    private Map<String, Long> listed() throws IOException {
        Map<String, Long> stored = new HashMap<>();
        for (ArchiveTarget.StoredObject o : target.list()) {
            stored.put(o.name(), o.size());
        }
        return stored;
    }

    /**
     * Whether the archive reaches this log's oldest segment: when it holds segments below it but not the one just before
     * it, those between are in neither (a replica removed them before its primary archived them, as no replica of this
     * version does), and a restore stops at the first of them. The archive's progress then stops there too, so that
     * {@code archived_lsn} never claims what the archive cannot give back (docs/operations.md, "Backup and restore").
     */
    private void checkForAGap(Map<String, Long> stored) {
        List<SegmentInfo> segments = log.segments();
        if (segments.isEmpty()) {
            return;
        }
        long oldest = segments.get(0).startLsn();
        long below = -1; // the newest segment the archive holds below the log's oldest
        for (String name : stored.keySet()) {
            ArchiveNames.Parsed p = ArchiveNames.parse(name);
            if (p != null && !p.partial() && p.start() < oldest) {
                below = Math.max(below, p.start());
            }
        }
        long missingFrom = below + log.segmentSize();
        if (below >= 0 && missingFrom < oldest) {
            progress.missing(missingFrom, oldest);
            LOG.error("The archive {} lacks the log from {} to {}, and this log no longer holds it: a restore from the "
                    + "archive stops at {}. Archive this log under a new prefix (archive-to) to begin a complete archive",
                    target.uri(), Lsn.format(missingFrom), Lsn.format(oldest), Lsn.format(missingFrom));
        }
    }

    /** The current segment: its flushed head goes up once records have waited the archive timeout; true when it did. */
    private boolean uploadTail(SegmentInfo s, long flushed, EpochHistory history) throws IOException {
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
        String name = ArchiveNames.partial(history.current().number(), start);
        target.put(name, s.path(), flushed - start);
        if (partialName != null && !partialName.equals(name)) {
            deleteQuietly(partialName); // the same head under an older epoch's name
        }
        partialName = name;
        progress.partialArchived(start, flushed);
        tailPendingSince = 0;
        LOG.debug("Archived the head of segment {} up to {} as {}", SegmentFiles.name(start), Lsn.format(flushed), name);
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
