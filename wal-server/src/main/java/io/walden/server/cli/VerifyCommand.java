package io.walden.server.cli;

import io.walden.core.Lsn;
import io.walden.core.internal.recovery.LogInspector;
import io.walden.server.http.LogPaths;
import io.walden.server.tools.Progress;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * Checks every segment and record of every log of a data directory: the log at its root, each named log in
 * {@code logs/} and the store's journal in {@code journal/} (see {@link DataDirLogs}). Exit code 0 only when every one
 * is clean.
 */
@Command(name = "verify", mixinStandardHelpOptions = true, usageHelpWidth = WaldenCli.HELP_WIDTH,
        description = {"Check every segment header and record (length, prev link, CRC-32C) and what lies past the end.",
                "Every log of the data directory: the log at its root (default), each named log (logs/NAME) and the store's",
                "journal, each reported on lines that begin with its name. Names the first problem of each precisely.",
                "Exit code: 0 every log clean, 1 a problem was found in one or more, 2 the check could not run.",
                "Reads the files without changing them, and takes no lock: " + DumpCommand.LIVE, DumpCommand.JOURNALED},
        exitCodeOnExecutionException = 2)
final class VerifyCommand implements Callable<Integer> {
    /** How the store's journal is named in the report: no log can have the name (it holds a space). */
    static final String JOURNAL = "journal (the store's)";

    @Option(names = "--data-dir", defaultValue = "walden-data", description = "Data directory (default: ${DEFAULT-VALUE}).")
    Path dataDir;

    @Override
    public Integer call() throws Exception {
        DataDirLogs.directoryOf(dataDir, null); // a missing data directory is the user's mistake, said in one line
        List<String> named = DataDirLogs.named(dataDir);
        List<String> failed = new ArrayList<>();
        int checked = 0;
        // A store's directory alone has no log at its root; a directory with neither is checked as a root log, which
        // reports that it holds no segment (as verify always did).
        if (named.isEmpty() || DataDirLogs.hasRootLog(dataDir)) {
            checked++;
            verify(LogPaths.DEFAULT_LOG, dataDir, failed);
        }
        for (String log : named) {
            checked++;
            verify(log, DataDirLogs.directoryOf(dataDir, log), failed);
        }
        Path journal = DataDirLogs.journal(dataDir);
        if (journal != null) {
            checked++;
            verify(JOURNAL, journal, failed);
        }
        if (checked > 1) {
            System.out.println(failed.isEmpty() ? "all " + checked + " logs clean"
                    : failed.size() + " of " + checked + " logs with a problem: " + String.join(", ", failed));
        }
        return failed.isEmpty() ? 0 : 1;
    }

    /** Checks one log, printing its lines prefixed by its name; adds the name to {@code failed} when it is not clean. */
    private static void verify(String name, Path dir, List<String> failed) throws IOException {
        long start = System.nanoTime();
        LogInspector.Result r;
        try (Progress progress = Progress.onTerminal()) {
            r = new LogInspector(dir).inspect(new LogInspector.Visitor() {
                @Override
                public void onSegment(long startLsn, Path file, int index, int count) {
                    progress.show(name + ": verifying segment " + (index + 1) + "/" + count + " (" + file.getFileName() + ")");
                }
            });
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        System.out.printf("%s: log %016x: %d segment(s) of %d bytes, %d records (+%d padding) from %s to %s (control file flushed %s), %d ms%n",
                name, r.logId(), r.segments(), r.segmentSize(), r.records(), r.paddingRecords(), Lsn.format(r.oldestLsn()),
                Lsn.format(r.endLsn()), Lsn.format(r.controlFlushedLsn()), ms);
        if (r.clean()) {
            System.out.println(name + ": clean");
        } else {
            System.out.println(name + ": PROBLEM at " + Lsn.format(r.problemLsn()) + ": " + r.problem());
            failed.add(name);
        }
    }
}
