package io.walden.core.internal.recovery;

import io.walden.core.Lsn;
import io.walden.core.WalConfig;
import io.walden.core.WalCorruptedException;
import io.walden.core.WalException;
import io.walden.core.WalLockedException;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.segment.SegmentFiles;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;
import io.walden.core.internal.segment.SegmentRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.List;

/**
 * Opening a log directory, up to the point where appends may start: lock the directory, clear leftovers,
 * create a new log or read the control file (rebuilding it when missing), map and check every segment, run
 * the recovery scan, make its repair durable, and write a fresh checkpoint. The {@code Wal} builds its
 * machinery on the {@link OpenedLog} this returns.
 *
 * <p>On any failure everything taken so far (mappings, control file, lock) is released before the exception
 * leaves. Thread-safety: used by the opening thread only.
 */
public final class LogOpener {
    private static final Logger LOG = LoggerFactory.getLogger(LogOpener.class);
    /** Held with an exclusive FileChannel lock while a process has the log open. */
    public static final String LOCK_FILE = "walden.lock";

    /**
     * What an open found and holds; the Wal takes ownership of every resource in it.
     *
     * @param history         the epoch history, and whether this log began its current epoch itself
     * @param shutDownCleanly whether the log was closed cleanly before this open (true for a new log)
     */
    public record OpenedLog(Path dir, FileChannel lockChannel, FileLock lock, long logId, ControlFile controlFile,
                            SegmentRegistry registry, List<Path> spares, RecoveryScanner.Result scan,
                            ControlFile.Checkpoint after, HistoryFile.Stored history, boolean created, boolean rebuilt,
                            boolean shutDownCleanly, long startNanos) {
    }

    private LogOpener() {
    }

    /**
     * @throws WalLockedException    when another process or another Wal holds the directory
     * @throws WalCorruptedException when once-durable data fails validation
     * @throws WalException          on any I/O error, with the cause
     */
    public static OpenedLog open(WalConfig config) {
        long startNanos = System.nanoTime();
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            throw new WalException("Walden maps little-endian files and needs a little-endian platform");
        }
        Path dir = config.directory().toAbsolutePath();
        FileChannel lockChannel = null;
        FileLock lock = null;
        SegmentRegistry registry = new SegmentRegistry(config.segmentSize());
        ControlFile controlFile = null;
        try {
            Files.createDirectories(dir);
            lockChannel = FileChannel.open(dir.resolve(LOCK_FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            try {
                lock = lockChannel.tryLock();
            } catch (OverlappingFileLockException e) {
                throw new WalLockedException("log directory " + dir + " is already open in this JVM");
            }
            if (lock == null) {
                throw new WalLockedException("log directory " + dir + " is in use by another process (" + LOCK_FILE
                        + " is locked); stop that process first");
            }
            for (Path temp : SegmentFiles.listWithSuffix(dir, SegmentFiles.TEMP_SUFFIX)) {
                LOG.info("Removing {} left by an interrupted write (a segment being prepared or a file being replaced)",
                        temp.getFileName());
                Files.delete(temp);
            }
            for (Path old : SegmentFiles.listWithSuffix(dir, SegmentFiles.REMOVED_SUFFIX)) {
                LOG.info("Removing {}, truncated before the last stop", old.getFileName());
                Files.delete(old);
            }
            List<Long> starts = SegmentFiles.list(dir);
            boolean hasControl = ControlFile.exists(dir);
            boolean created = false;
            boolean rebuilt = false;
            long logId;
            ControlFile.Checkpoint cp;
            if (!hasControl && starts.isEmpty()) {
                created = true;
                logId = config.logId() != 0 ? config.logId() : newLogId();
                long base = config.baseLsn();
                SegmentFiles.prepare(dir, config.segmentSize(), base, logId, null);
                starts = List.of(base);
                cp = firstCheckpoint(logId, config.segmentSize(), base, false);
                controlFile = ControlFile.create(dir, cp);
            } else if (!hasControl) {
                rebuilt = true;
                logId = logIdOf(SegmentFiles.path(dir, starts.get(0)));
                LOG.warn("Control file {} is missing in {}: rebuilding it by scanning from the oldest segment; "
                        + "damage anywhere in the scan will be treated as a torn tail", ControlFile.NAME, dir);
                cp = new ControlFile.Checkpoint(logId, config.segmentSize(), starts.get(0), -1, 0);
            } else {
                controlFile = ControlFile.open(dir);
                cp = controlFile.read();
                logId = cp.logId();
                if (cp.segmentSize() != config.segmentSize()) {
                    throw new WalException("the log in " + dir + " was created with segments of " + cp.segmentSize()
                            + " bytes but the config asks for " + config.segmentSize() + "; the size of an existing log cannot change");
                }
            }
            if (config.logId() != 0 && logId != config.logId()) {
                throw new WalCorruptedException("the log in " + dir + " has log id " + Long.toHexString(logId)
                        + ", not the " + Long.toHexString(config.logId()) + " asked for: it is a copy of another log",
                        Lsn.INVALID, dir);
            }
            HistoryFile.Stored history = HistoryFile.readStored(dir); // refused before recovery changes anything
            mapSegments(dir, config.segmentSize(), logId, starts, cp.scanStart(), registry);
            boolean closedCleanly = hasControl && cp.shutDown();
            RecoveryScanner.Result scan = RecoveryScanner.scan(registry, cp.scanStart(), cp.scanStartPrev(),
                    cp.flushedLsn(), config.truncateAtCorruption(), closedCleanly);
            long endSegment = registry.segmentStart(scan.endLsn());
            if (registry.get(endSegment) == null) {
                Path p = SegmentFiles.prepare(dir, config.segmentSize(), endSegment, logId, null);
                registry.add(Segment.map(p, endSegment, config.segmentSize()));
            }
            // Make what recovery found durable before anything is appended after it. After a clean close it changed
            // nothing, and the close left everything durable (forced, or, for a store's log, in the store journal,
            // which the store's open wrote back and forced before this); an end segment made here was forced as made.
            for (Segment s : registry.snapshot()) {
                if (s.startLsn() >= scan.scanStart() && !(closedCleanly && scan.bytesCut() == 0)) {
                    s.force(false);
                }
            }
            SegmentFiles.forceDirectory(dir);
            Long endPrev = scan.firstPrevBySegment().get(endSegment);
            long readLimit = readLimit(dir, cp, history, scan.endLsn());
            ControlFile.Checkpoint after = new ControlFile.Checkpoint(logId, config.segmentSize(), endSegment,
                    endPrev == null ? scan.lastRecordLsn() : endPrev, scan.endLsn(), false, readLimit);
            if (controlFile == null) {
                controlFile = ControlFile.create(dir, after);
            } else {
                controlFile.write(after);
            }
            List<Path> spares = SegmentFiles.listWithSuffix(dir, SegmentFiles.SPARE_SUFFIX);
            return new OpenedLog(dir, lockChannel, lock, logId, controlFile, registry, spares, scan, after,
                    history, created, rebuilt, created || closedCleanly, startNanos);
        } catch (IOException e) {
            cleanUpFailedOpen(registry, controlFile, lockChannel);
            throw new WalException("could not open the log in " + dir + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            cleanUpFailedOpen(registry, controlFile, lockChannel);
            throw e;
        }
    }

    /**
     * Lays down a new, empty log in {@code config.directory()}, which holds no log, without opening it: its first
     * segment and its control file, each forced with its directory entry, the checkpoint saying the log was closed
     * cleanly (it was never opened, and nothing was appended to it). {@link #open} then opens it as it opens a new log,
     * without a recovery to speak of. For a store, which builds a log under a temporary name and renames it whole: the
     * log is opened once, in its place, instead of once to make its files and once more where it stays.
     *
     * @throws IOException on an I/O error (what was written stays in the directory: the caller removes it)
     */
    public static void create(WalConfig config) throws IOException {
        Path dir = config.directory().toAbsolutePath();
        Files.createDirectories(dir);
        long logId = config.logId() != 0 ? config.logId() : newLogId();
        long base = config.baseLsn();
        SegmentFiles.prepare(dir, config.segmentSize(), base, logId, null);
        ControlFile.create(dir, firstCheckpoint(logId, config.segmentSize(), base, true)).close();
    }

    /** The checkpoint of a new log whose first segment starts at {@code base}. */
    private static ControlFile.Checkpoint firstCheckpoint(long logId, long segmentSize, long base, boolean shutDown) {
        // A log beginning at a later segment does not know the link before its first record (-1: any below it).
        return new ControlFile.Checkpoint(logId, segmentSize, base, base == 0 ? Lsn.INVALID : -1,
                base + SegmentHeaderDescriptor.LENGTH, shutDown, Long.MAX_VALUE);
    }

    /**
     * A replica's read limit stays (records beyond it may still be rewound), never beyond what recovery kept. A log that
     * began its current epoch itself has none: it was promoted (or began an epoch after a crash), and its checkpoint
     * may predate that (docs/format.md, "Epoch history file").
     */
    private static long readLimit(Path dir, ControlFile.Checkpoint cp, HistoryFile.Stored history, long end) {
        if (cp.readLimit() == Long.MAX_VALUE) {
            return Long.MAX_VALUE;
        }
        if (history.begunHere()) {
            // Not a fault: a promotion whose next checkpoint a crash took, or a primary that steps down and is reopened to
            // follow another before that one's epoch reached it (a cluster's hand-over does this every time).
            LOG.info("The control file of {} holds a replica's read limit {}, but the log began its current epoch {} "
                    + "itself (promoted since that checkpoint, or a former primary about to follow another): its readers "
                    + "see everything it holds until a primary's stream sets a limit again",
                    dir, Lsn.format(cp.readLimit()), history.history().current());
            return Long.MAX_VALUE;
        }
        return Math.min(cp.readLimit(), end);
    }

    /**
     * Registers the log's segments: those recovery scans (from {@code mapFrom} on) mapped, the older ones known by name
     * only (parked: mapped at their first read, see OpenSegments), so that opening a log of many segments holds no
     * mapping or descriptor for the sealed ones. Every segment's header is checked either way.
     */
    private static void mapSegments(Path dir, long segmentSize, long logId, List<Long> starts, long mapFrom,
                                    SegmentRegistry registry) throws IOException {
        long expected = -1;
        for (long start : starts) {
            Path p = SegmentFiles.path(dir, start);
            if (expected >= 0 && start != expected) {
                throw new WalCorruptedException("segment " + SegmentFiles.name(expected) + " is missing from " + dir
                        + " (the segments before and after it are present)", expected, SegmentFiles.path(dir, expected));
            }
            if ((start & (segmentSize - 1)) != 0) {
                throw new WalCorruptedException("segment file " + p.getFileName() + " does not start on a segment boundary",
                        start, p);
            }
            ByteBuffer header = ByteBuffer.allocate(SegmentHeaderDescriptor.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            if (start + segmentSize <= mapFrom) {
                try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
                    if (ch.size() != segmentSize) {
                        throw new WalCorruptedException("segment " + p + " cannot be mapped: it is " + ch.size()
                                + " bytes long, expected " + segmentSize, start, p);
                    }
                    ch.read(header, 0);
                }
                registry.add(Segment.unmapped(p, start, segmentSize));
            } else {
                Segment s;
                try {
                    s = Segment.map(p, start, segmentSize);
                } catch (IOException e) {
                    throw new WalCorruptedException("segment " + p + " cannot be mapped: " + e.getMessage(), start, p);
                }
                registry.add(s);
                s.channel().read(header, 0);
            }
            String problem = SegmentHeaderDescriptor.validate(header, segmentSize, start, logId);
            if (problem != null) {
                throw new WalCorruptedException("segment " + p + " is not part of this log: " + problem, start, p);
            }
            expected = start + segmentSize;
        }
    }

    private static long logIdOf(Path segment) throws IOException {
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(SegmentHeaderDescriptor.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(b, 0);
            return b.getLong(SegmentHeaderDescriptor.LOG_ID_OFFSET);
        }
    }

    private static long newLogId() {
        long id;
        SecureRandom random = new SecureRandom();
        do {
            id = random.nextLong();
        } while (id == 0);
        return id;
    }

    private static void cleanUpFailedOpen(SegmentRegistry registry, ControlFile controlFile, FileChannel lockChannel) {
        for (Segment s : registry.snapshot()) {
            Segment gone = registry.remove(s);
            if (gone != null) {
                gone.markRemoved();
            }
        }
        try {
            if (controlFile != null) {
                controlFile.close();
            }
            if (lockChannel != null) {
                lockChannel.close(); // releases the lock
            }
        } catch (IOException e) {
            LOG.warn("Cleaning up after a failed open: {}", e.toString());
        }
    }

}
