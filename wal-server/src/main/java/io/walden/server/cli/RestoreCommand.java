package io.walden.server.cli;

import io.walden.core.Lsn;
import io.walden.core.RecordTime;
import io.walden.core.WalCorruptedException;
import io.walden.core.WalStore;
import io.walden.core.archive.ArchiveNames;
import io.walden.core.archive.Restore;
import io.walden.core.archive.ArchiveTarget;
import io.walden.core.archive.ArchiveTargets;
import io.walden.core.internal.segment.SegmentFiles;
import io.walden.server.config.LogArchives;
import io.walden.server.tools.Progress;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

/**
 * Builds logs from an archive, up to an LSN or a time (docs/operations.md, "Backup and restore"): the log
 * {@code default} from the objects at the archive's location, named log {@code orders} from those under
 * {@code logs/orders/} ({@link LogArchives}) into {@code <data-dir>/logs/orders}, where the server's store opens it.
 */
@Command(name = "restore", mixinStandardHelpOptions = true, usageHelpWidth = WaldenCli.HELP_WIDTH,
        description = {"Build the logs in --data-dir from the segments archived at --from.",
                "The archive is s3://bucket[/prefix] or file:///dir. Without --log: the log default and every named log the",
                "archive holds (under logs/NAME/), into an empty or absent --data-dir. With --log NAME: that log alone; a",
                "named log goes into --data-dir/logs/NAME, which must not exist, beside whatever else --data-dir holds (no",
                "server may hold it meanwhile). Every segment header and record is checked, and each log ends at the last",
                "whole record that ends at or before --until, and whose time is at or before --until-time (PostgreSQL's",
                "recovery_target_time; the earlier wins; default: the end of the archive).",
                "S3 credentials and region come from the AWS SDK's default chains (AWS_ACCESS_KEY_ID, AWS_REGION, profiles...).",
                "Exit code: 0 restored, 1 the archive of a log failed a check (nothing is left of that log) or holds less than",
                "asked for (a gap, or an end before --until: the log built up to there is left, and opens), 2 the restore",
                "could not run."},
        exitCodeOnExecutionException = 2)
final class RestoreCommand implements Callable<Integer> {

    @Option(names = "--from", required = true, description = "The archive: s3://bucket[/prefix] or file:///dir.")
    String from;

    @Option(names = "--data-dir", required = true, description = "Where to build the logs.")
    Path dataDir;

    @Option(names = "--log", paramLabel = "NAME", description = "Restore this log alone: default, or a named log "
            + "(default: the log default and every named log archived).")
    String log;

    @Option(names = "--until", description = "Last LSN to restore up to (X/Y or decimal): records ending after it are left "
            + "out. An LSN is one log's: with named logs archived, give --log with it.")
    String until;

    @Option(names = "--until-time", paramLabel = "TIME", description = "Stop after the last record appended at or before "
            + "this RFC 3339 time (2026-11-25T14:31:59Z, or with an offset): restore to just before a bad deploy.")
    String untilTime;

    @Option(names = "--archive-endpoint", description = "Endpoint of an S3-compatible store (http://host:port); requests are then path-style.")
    String endpoint;

    private long untilLsn;
    private Instant untilInstant;

    /** Restore builds a new log: it never writes into a directory that holds anything. */
    private static void refuseNonEmpty(Path dir) throws IOException {
        if (Files.isDirectory(dir)) {
            try (var files = Files.list(dir)) {
                if (files.findAny().isPresent()) {
                    throw new UserError("refusing to restore into " + dir + ": it is not empty (restore builds a new log; "
                            + "move the old one away first)");
                }
            }
        } else if (Files.exists(dir)) {
            throw new UserError("refusing to restore into " + dir + ": it is not a directory");
        }
    }

    @Override
    public Integer call() throws Exception {
        untilLsn = until == null ? Long.MAX_VALUE : Lsn.parse(until);
        if (untilTime != null) {
            try {
                untilInstant = RecordTime.parse(untilTime); // refused before anything is read
            } catch (IllegalArgumentException e) {
                throw new UserError("--until-time: " + e.getMessage());
            }
        }
        String only = LogName.checked(log);
        if (only == null || LogName.isDefault(only)) {
            refuseNonEmpty(dataDir);
        }
        try (ArchiveTarget target = ArchiveTargets.openExisting(from, endpoint)) {
            if (only != null) {
                return LogName.isDefault(only) ? restore(null, target, dataDir) : restoreNamed(only, target);
            }
            List<String> named = LogArchives.named(target);
            if (named.isEmpty()) {
                return restore(null, target, dataDir); // an archive of the default log alone: as restore always did
            }
            if (until != null) {
                throw new UserError("--until is an LSN of one log, and " + from + " holds named logs too (" + String.join(", ", named)
                        + "): give --log with it (--until-time applies to every log)");
            }
            int status = 0;
            if (target.list().stream().anyMatch(o -> ArchiveNames.parse(o.name()) != null)) {
                status = restore(null, target, dataDir);
            } else {
                System.out.println("default: no segment archived at " + from + ": no log restored at the root of " + dataDir);
            }
            for (String name : named) {
                status = Math.max(status, restoreNamed(name, target));
            }
            return status;
        } catch (IOException e) { // the store failed, or the archive holds nothing to restore
            System.err.println("walden restore: " + e.getMessage());
            return 2;
        }
    }

    /**
     * Restores named log {@code name} into {@code logs/<name>}, as a log of the store there: built under a name the
     * store's open removes (a restore a crash interrupted leaves no half log under the log's name), renamed into place
     * once whole, all while holding the store's lock. It has the store's defaults as settings (the archive does not
     * keep a log's own) and is given its journal key when the store first opens it.
     */
    private int restoreNamed(String name, ArchiveTarget root) throws IOException {
        Files.createDirectories(dataDir.resolve(WalStore.LOGS));
        try (FileChannel lockFile = FileChannel.open(dataDir.resolve(WalStore.LOCK), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE); FileLock held = tryLock(lockFile)) {
            Path dest = DataDirLogs.named(dataDir, name);
            if (Files.exists(dest)) {
                throw new UserError("refusing to restore log " + name + " into " + dest + ": it exists (delete the log "
                        + "first, or restore into another --data-dir)");
            }
            Path building = WalStore.buildingDirectory(dataDir, name);
            deleteTree(building); // what a restore a crash interrupted left
            int status;
            try {
                status = restore(name, root.under(LogArchives.prefix(name)), building);
            } catch (IOException | RuntimeException e) {
                deleteTree(building);
                throw e;
            }
            if (SegmentFiles.list(building).isEmpty()) {
                deleteTree(building); // its archive failed a check: the restore removed what it wrote
            } else {
                Files.move(building, dest, StandardCopyOption.ATOMIC_MOVE);
                SegmentFiles.forceDirectory(dest.getParent());
            }
            return status;
        }
    }

    private FileLock tryLock(FileChannel lockFile) throws IOException {
        FileLock lock;
        try {
            lock = lockFile.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        }
        if (lock == null) {
            throw new UserError("refusing to restore into " + dataDir + ": a server holds its named logs ("
                    + WalStore.LOCK + "); stop it first");
        }
        return lock;
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    /**
     * Restores one log ({@code name}, null for the log {@code default}) from {@code target} into {@code into}, reporting
     * it on lines that begin with its name (the default log's as restore always printed them).
     *
     * @return the exit status for this log: 0 restored, 1 a check failed (nothing left) or less than asked for
     */
    private int restore(String name, ArchiveTarget target, Path into) throws IOException {
        String label = name == null ? "" : name + ": ";
        long start = System.nanoTime();
        Restore.Result r;
        boolean terminal = System.console() != null;
        try (Progress bar = Progress.onTerminal()) {
            // With --until-time the count is an upper bound: the download stops at the first segment past the time.
            String of = untilInstant == null ? "/" : " of up to ";
            r = Restore.fromArchive(target, into, untilLsn, untilInstant, (index, count, object, bytes) -> {
                if (terminal) {
                    int width = 30;
                    int done = count == 0 ? width : (int) ((long) index * width / count);
                    bar.show(label + "[" + "#".repeat(done) + ".".repeat(width - done) + "] segment " + (index + 1) + of
                            + count + " " + object);
                } else {
                    System.err.println("restore: " + label + "segment " + (index + 1) + of + count + " " + object + " ("
                            + bytes + " bytes)");
                }
            });
        } catch (WalCorruptedException e) {
            System.out.println(label + "PROBLEM: " + e.getMessage());
            return 1;
        }
        Path dest = name == null ? into : DataDirLogs.named(dataDir, name); // where it is once renamed
        long ms = (System.nanoTime() - start) / 1_000_000;
        // What the restored log holds; a segment downloaded only to find where the time falls is not in it.
        System.out.printf("%srestored %d segment(s), %d records, from %s to %s%s into %s in %d ms (%d segment(s) "
                        + "downloaded); it begins epoch %d there (history %s)%n", label, r.segments(), r.records(),
                Lsn.format(r.oldestLsn()), Lsn.format(r.endLsn()), r.usedPartial() ? " (the last from a partial upload)" : "",
                dest, ms, r.fetched(), r.history().current().number(), r.history());
        if (r.gapAt() >= 0) {
            System.out.println(label + "PROBLEM: segment " + SegmentFiles.name(r.gapAt()) + " is missing from the "
                    + "archive and later segments cannot follow the gap: the log in " + dest + " ends at "
                    + Lsn.format(r.endLsn()) + " (it opens; what lies past the gap is not in it)");
            return 1;
        }
        if (r.shortOf(untilLsn)) {
            System.out.println(label + "PROBLEM: the archive ends at " + Lsn.format(r.archiveEnd()) + ", before --until "
                    + Lsn.format(untilLsn) + ": the log in " + dest + " ends there");
            return 1;
        }
        return 0;
    }
}
