package io.walden.server.cli;

import io.walden.core.Durability;
import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.WalReader;
import io.walden.core.WalRecord;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Appends records to a log on disk from several threads at durability {@code on}, reads them back, and
 * prints what happened: a first look at Walden that needs nothing but a JDK.
 */
@Command(name = "demo", mixinStandardHelpOptions = true, usageHelpWidth = WaldenCli.HELP_WIDTH,
        description = "Append records to a log on disk from several threads, read them back, print the figures.")
final class DemoCommand implements Callable<Integer> {

    @Option(names = "--data-dir", description = "Log directory (default: a temporary directory, removed afterwards; the "
            + "working directory is left as it was).")
    Path dataDir;

    @Option(names = "--records", defaultValue = "20000", description = "Records to append (default: ${DEFAULT-VALUE}).")
    int records;

    @Option(names = "--threads", defaultValue = "8", description = "Concurrent appenders (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = "--durability", defaultValue = "on", description = "off, local, remote_write, on, remote_apply (default: ${DEFAULT-VALUE}).")
    String durability;

    @Override
    public Integer call() throws Exception {
        Durability level = Durability.parse(durability);
        Path dir = dataDir != null ? dataDir : Files.createTempDirectory("walden-demo");
        try {
            return run(dir, level);
        } finally {
            if (dataDir == null) {
                deleteTree(dir);
            }
        }
    }

    /** The file system's type (tmpfs measures memory, not a disk). */
    private static String fileSystem(Path dir) {
        try {
            return Files.getFileStore(dir).type();
        } catch (IOException e) {
            return "unknown";
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (var files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private int run(Path dir, Durability level) throws InterruptedException {
        try (Wal wal = Wal.open(WalConfig.builder(dir).build())) {
            System.out.printf("Opened %s (on a %s file system%s): %s%n", wal.directory(), fileSystem(dir),
                    dataDir == null ? "; --data-dir DIR measures the disk DIR is on" : "", wal.status().recoveryReport());
            long first = wal.insertLsn();
            AtomicLong appended = new AtomicLong();
            CountDownLatch done = new CountDownLatch(threads);
            long start = System.nanoTime();
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                Thread w = new Thread(() -> {
                    for (long n; (n = appended.getAndIncrement()) < records; ) {
                        wal.append(thread, ("demo record " + n + " from thread " + thread).getBytes(StandardCharsets.UTF_8), level);
                    }
                    done.countDown();
                }, "demo-" + t);
                workers.add(w);
                w.start();
            }
            done.await();
            double seconds = (System.nanoTime() - start) / 1e9;
            System.out.printf("Appended %,d records at durability %s from %d threads in %.2f s: %,.0f commits/s%n",
                    records, level.configName(), threads, seconds, records / seconds);
            System.out.printf("Positions: insert %s, written %s, flushed %s; %d segment(s)%n",
                    Lsn.format(wal.insertLsn()), Lsn.format(wal.writtenLsn()), Lsn.format(wal.flushedLsn()), wal.status().segmentCount());
            int read = 0;
            WalRecord last = null;
            try (WalReader reader = wal.reader(first)) {
                for (WalRecord r; (r = reader.next()) != null; read++) {
                    last = r;
                }
            }
            System.out.printf("Read back %,d records; the last one, at %s: \"%s\"%n", read,
                    last == null ? "-" : Lsn.format(last.lsn()),
                    last == null ? "" : new String(last.payload(), StandardCharsets.UTF_8));
            return read == records ? 0 : 1;
        }
    }
}
