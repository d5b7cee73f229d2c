package io.walden.server.cli;

import io.walden.core.Lsn;
import io.walden.core.internal.recovery.LogInspector;
import io.walden.server.tools.Progress;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.concurrent.Callable;

/** Checks every segment and record of a log directory; exit code 0 only when the log is clean. */
@Command(name = "verify", mixinStandardHelpOptions = true, usageHelpWidth = WaldenCli.HELP_WIDTH,
        description = {"Check every segment header and record (length, prev link, CRC-32C) and what lies past the end.",
                "Names the first problem precisely. Exit code: 0 clean, 1 a problem was found, 2 the check could not run.",
                "Reads the files without changing them, and takes no lock: " + DumpCommand.LIVE},
        exitCodeOnExecutionException = 2)
final class VerifyCommand implements Callable<Integer> {

    @Option(names = "--data-dir", defaultValue = "walden-data", description = "Log directory (default: ${DEFAULT-VALUE}).")
    Path dataDir;

    @Override
    public Integer call() throws Exception {
        long start = System.nanoTime();
        LogInspector.Result r;
        try (Progress progress = Progress.onTerminal()) {
            r = new LogInspector(DumpCommand.logDirectory(dataDir)).inspect(new LogInspector.Visitor() {
                @Override
                public void onSegment(long startLsn, Path file, int index, int count) {
                    progress.show("verifying segment " + (index + 1) + "/" + count + " (" + file.getFileName() + ")");
                }
            });
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        System.out.printf("log %016x: %d segment(s) of %d bytes, %d records (+%d padding) from %s to %s (control file flushed %s), %d ms%n",
                r.logId(), r.segments(), r.segmentSize(), r.records(), r.paddingRecords(), Lsn.format(r.oldestLsn()), Lsn.format(r.endLsn()),
                Lsn.format(r.controlFlushedLsn()), ms);
        if (r.clean()) {
            System.out.println("clean");
            return 0;
        }
        System.out.println("PROBLEM at " + Lsn.format(r.problemLsn()) + ": " + r.problem());
        return 1;
    }
}
