package io.walden.core.internal.archive;

import io.walden.core.internal.segment.SegmentFiles;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.StandardOpenOption;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongPredicate;

/**
 * Which segments are archived, kept across restarts: PostgreSQL's {@code archive_status} directory. An empty file
 * {@code archive_status/<segment>.done} is created (and the directory forced) only after the segment's upload
 * verified; {@code <segment>.dropped} marks one given up under {@link ArchiveConfig.WhenFull#DROP_ARCHIVE}. A crash
 * before the marker is durable uploads the segment again: nothing is skipped, at worst something is sent twice.
 * Segment names are LSNs and never reused, so a marker cannot speak for another segment; markers of removed segments
 * are deleted by {@link #forgetBelow}.
 *
 * <p>Thread-safety: the archiver's thread writes; {@link #isSettled} may be read from any thread.
 */
public final class ArchiveStatus {
    public static final String DIR = "archive_status";
    /** The archive the markers speak for: its URI. */
    static final String TARGET = "target";
    private static final Logger LOG = LoggerFactory.getLogger(ArchiveStatus.class);
    private static final String DONE = ".done";
    private static final String DROPPED = ".dropped";

    private final Path dir;
    /** Names settled (done or dropped), mirrored from the files. */
    private final Set<String> settled = ConcurrentHashMap.newKeySet();

    /**
     * The markers of the log in {@code logDir} for the archive {@code targetUri}. Markers speak for one archive: when the
     * log was archived somewhere else before (a new {@code archive-to}), they are all forgotten, so that every segment is
     * uploaded to the new archive and none is taken for archived there.
     */
    public ArchiveStatus(Path logDir, String targetUri) throws IOException {
        this.dir = logDir.resolve(DIR);
        Files.createDirectories(dir);
        Path target = dir.resolve(TARGET);
        String previous = Files.exists(target) ? Files.readString(target, StandardCharsets.UTF_8).trim() : null;
        if (!targetUri.equals(previous)) {
            // No name yet: markers of a Walden before archives were named here, taken as this archive's.
            if (previous != null) {
                LOG.info("The log in {} is archived to {} now, not {}: every segment is archived there again", logDir,
                        targetUri, previous);
                try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
                    for (Path p : files) {
                        Files.delete(p);
                    }
                }
            }
            Files.writeString(target, targetUri + "\n", StandardCharsets.UTF_8);
            try (FileChannel ch = FileChannel.open(target, StandardOpenOption.WRITE)) {
                ch.force(true);
            }
            SegmentFiles.forceDirectory(dir);
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path p : files) {
                String f = p.getFileName().toString();
                if (f.endsWith(DONE)) {
                    settled.add(f.substring(0, f.length() - DONE.length()));
                } else if (f.endsWith(DROPPED)) {
                    settled.add(f.substring(0, f.length() - DROPPED.length()));
                }
            }
        }
    }

    public boolean isSettled(long segmentStart) {
        return settled.contains(SegmentFiles.name(segmentStart));
    }

    public void markDone(long segmentStart) throws IOException {
        mark(segmentStart, DONE);
    }

    public void markDropped(long segmentStart) throws IOException {
        mark(segmentStart, DROPPED);
    }

    private void mark(long segmentStart, String suffix) throws IOException {
        String name = SegmentFiles.name(segmentStart);
        Path marker = dir.resolve(name + suffix);
        if (!Files.exists(marker)) {
            Files.createFile(marker);
        }
        SegmentFiles.forceDirectory(dir);
        settled.add(name);
    }

    /** Forgets segments from {@code lsn}'s on (after a promotion their content may differ from what was archived). */
    public void forgetFrom(long segmentStart) throws IOException {
        forget(start -> start >= segmentStart);
    }

    /** Deletes the markers of segments that start below {@code oldestStart} (truncated away). */
    public void forgetBelow(long oldestStart) throws IOException {
        forget(start -> start < oldestStart);
    }

    private void forget(LongPredicate which) throws IOException {
        boolean changed = false;
        for (String name : new HashSet<>(settled)) {
            long start = SegmentFiles.parseName(name);
            if (start >= 0 && which.test(start)) {
                Files.deleteIfExists(dir.resolve(name + DONE));
                Files.deleteIfExists(dir.resolve(name + DROPPED));
                settled.remove(name);
                changed = true;
            }
        }
        if (changed) {
            SegmentFiles.forceDirectory(dir);
        }
    }
}
