package io.walden.server.cli;

import io.walden.server.tools.FsyncTest;
import io.walden.server.tools.Progress;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/** Like pg_test_fsync: ops/s and latency of each way to make a 4 KiB write durable on a directory's file system. */
@Command(name = "test-fsync", mixinStandardHelpOptions = true, usageHelpWidth = WaldenCli.HELP_WIDTH,
        description = {"Measure each sync method for 4 KiB writes on a file in DIR, and recommend one.",
                "Each method is measured on a preallocated and on a growing file; the report ends with the disk's",
                "durable-commit ceiling for one committer."})
final class TestFsyncCommand implements Callable<Integer> {

    @Option(names = "--dir", defaultValue = ".", description = "Directory on the file system to test (default: current).")
    Path dir;

    @Option(names = "--seconds", defaultValue = "2", description = "Seconds per method (default: ${DEFAULT-VALUE}).")
    double seconds;

    @Override
    public Integer call() throws Exception {
        System.out.printf(Locale.ROOT, "%d seconds per test, %d-byte writes, in %s%n", (long) seconds, FsyncTest.BLOCK,
                dir.toAbsolutePath());
        FsyncTest test;
        List<FsyncTest.Measurement> results;
        try (Progress progress = Progress.onTerminal()) {
            test = new FsyncTest(dir, (long) (seconds * TimeUnit.SECONDS.toNanos(1)), progress::show);
            results = test.run();
        }
        String file = null;
        for (FsyncTest.Measurement m : results) {
            if (!m.file().equals(file)) {
                file = m.file();
                System.out.printf(Locale.ROOT, "%nOn a %s file:%n", file);
                System.out.printf(Locale.ROOT, "  %-28s %12s %12s %12s  %s%n", "method", "ops/sec", "mean usecs", "p99 usecs", "Walden sync method");
            }
            System.out.printf(Locale.ROOT, "  %-28s %,12.0f %12.1f %12d  %s%n", m.method(), m.opsPerSecond(), m.meanMicros(),
                    m.p99Micros(), m.walden() == null ? "" : m.walden());
        }
        FsyncTest.Measurement best = test.recommended();
        System.out.printf(Locale.ROOT, "%nRecommended sync method: %s (%s on a preallocated file, as Walden's segments are)%n",
                best.walden(), best.method());
        System.out.printf(Locale.ROOT, "Durable-commit ceiling for one committer: about %,.0f commits/s (%.0f usecs each);%n"
                + "group commit multiplies it by the committers served per flush.%n", best.opsPerSecond(), best.meanMicros());
        System.out.printf(Locale.ROOT, "commitDelay, if you set one: about half a flush, %.0f usecs (PostgreSQL's advice).%n",
                best.meanMicros() / 2);
        return 0;
    }
}
