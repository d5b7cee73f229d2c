package io.walden.server.cli;

import io.walden.core.Lsn;
import io.walden.core.RecordTime;
import io.walden.core.WalCorruptedException;
import io.walden.core.archive.Restore;
import io.walden.core.archive.ArchiveTarget;
import io.walden.core.archive.ArchiveTargets;
import io.walden.core.internal.segment.SegmentFiles;
import io.walden.server.tools.Progress;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.Callable;

/** Builds a log from an archive, up to an LSN (docs/operations.md, "Backup and restore"). */
@Command(name = "restore", mixinStandardHelpOptions = true, usageHelpWidth = WaldenCli.HELP_WIDTH,
        description = {"Build a log in --data-dir from the segments archived at --from.",
                "The archive is s3://bucket[/prefix] or file:///dir. Every segment header and record is checked, and the",
                "log ends at the last whole record that ends at or before --until, and whose time is at or before",
                "--until-time (PostgreSQL's recovery_target_time; the earlier wins; default: the end of the archive).",
                "The directory must be empty or absent.",
                "S3 credentials and region come from the AWS SDK's default chains (AWS_ACCESS_KEY_ID, AWS_REGION, profiles...).",
                "Exit code: 0 restored, 1 the archive failed a check (nothing is left in --data-dir) or holds less than asked",
                "for (a gap, or an end before --until: the log built up to there is left, and opens), 2 the restore could not run."},
        exitCodeOnExecutionException = 2)
final class RestoreCommand implements Callable<Integer> {

    @Option(names = "--from", required = true, description = "The archive: s3://bucket[/prefix] or file:///dir.")
    String from;

    @Option(names = "--data-dir", required = true, description = "Where to build the log (empty or absent).")
    Path dataDir;

    @Option(names = "--until", description = "Last LSN to restore up to (X/Y or decimal): records ending after it are left out.")
    String until;

    @Option(names = "--until-time", paramLabel = "TIME", description = "Stop after the last record appended at or before "
            + "this RFC 3339 time (2026-11-25T14:31:59Z, or with an offset): restore to just before a bad deploy.")
    String untilTime;

    @Option(names = "--archive-endpoint", description = "Endpoint of an S3-compatible store (http://host:port); requests are then path-style.")
    String endpoint;

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
        long untilLsn = until == null ? Long.MAX_VALUE : Lsn.parse(until);
        Instant untilInstant = null;
        if (untilTime != null) {
            try {
                untilInstant = RecordTime.parse(untilTime); // refused before anything is read
            } catch (IllegalArgumentException e) {
                throw new UserError("--until-time: " + e.getMessage());
            }
        }
        long start = System.nanoTime();
        Restore.Result r;
        boolean terminal = System.console() != null;
        refuseNonEmpty(dataDir);
        try (ArchiveTarget target = ArchiveTargets.openExisting(from, endpoint); Progress bar = Progress.onTerminal()) {
            // With --until-time the count is an upper bound: the download stops at the first segment past the time.
            String of = untilInstant == null ? "/" : " of up to ";
            r = Restore.fromArchive(target, dataDir, untilLsn, untilInstant, (index, count, name, bytes) -> {
                if (terminal) {
                    int width = 30;
                    int done = count == 0 ? width : (int) ((long) index * width / count);
                    bar.show("[" + "#".repeat(done) + ".".repeat(width - done) + "] segment " + (index + 1) + of + count
                            + " " + name);
                } else {
                    System.err.println("restore: segment " + (index + 1) + of + count + " " + name + " (" + bytes + " bytes)");
                }
            });
        } catch (WalCorruptedException e) {
            System.out.println("PROBLEM: " + e.getMessage());
            return 1;
        } catch (IOException e) { // the store failed, or the archive holds nothing to restore
            System.err.println("walden restore: " + e.getMessage());
            return 2;
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        // What the restored log holds; a segment downloaded only to find where the time falls is not in it.
        System.out.printf("restored %d segment(s), %d records, from %s to %s%s into %s in %d ms (%d segment(s) "
                        + "downloaded); it begins epoch %d there (history %s)%n", r.segments(), r.records(),
                Lsn.format(r.oldestLsn()), Lsn.format(r.endLsn()), r.usedPartial() ? " (the last from a partial upload)" : "",
                dataDir, ms, r.fetched(), r.history().current().number(), r.history());
        if (r.gapAt() >= 0) {
            System.out.println("PROBLEM: segment " + SegmentFiles.name(r.gapAt()) + " is missing from the "
                    + "archive and later segments cannot follow the gap: the log in " + dataDir + " ends at "
                    + Lsn.format(r.endLsn()) + " (it opens; what lies past the gap is not in it)");
            return 1;
        }
        if (r.shortOf(untilLsn)) {
            System.out.println("PROBLEM: the archive ends at " + Lsn.format(r.archiveEnd()) + ", before --until "
                    + Lsn.format(untilLsn) + ": the log in " + dataDir + " ends there");
            return 1;
        }
        return 0;
    }
}
