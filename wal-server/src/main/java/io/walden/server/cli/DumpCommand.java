package io.walden.server.cli;

import io.walden.core.Compression;
import io.walden.core.Lsn;
import io.walden.core.RecordTime;
import io.walden.core.internal.recovery.LogInspector;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;

/**
 * Like pg_waldump: one line per record, or with {@code --stats} a table of counts and bytes per type.
 * Reads a directory no server holds, changing nothing.
 */
@Command(name = "dump", mixinStandardHelpOptions = true, usageHelpWidth = WaldenCli.HELP_WIDTH,
        description = {"Print the records of a log directory, one line each (like pg_waldump), or statistics per type.",
                "Reads the files without changing them, and takes no lock: " + DumpCommand.LIVE,
                DumpCommand.JOURNALED})
final class DumpCommand implements Callable<Integer> {
    /** What reading a running server's directory gives (verify says the same; so does docs/operations.md, "Tools"). */
    static final String LIVE = "on a running server's directory it shows a moment of a moving log (its last records may "
            + "read as a torn tail, and segments removed meanwhile end the walk); stop the server, or copy the directory, "
            + "for an exact picture.";

    /**
     * What a named log's files may lack (verify says the same; so does docs/operations.md, "Named logs on disk"): the
     * tools read the files, never the store's journal, which the store's open writes back.
     */
    static final String JOURNALED = "A named log is read from its files alone: after an OS crash they may lack its last "
            + "acknowledged records until the server (its store) opens and writes the store's journal back into them.";

    @Option(names = "--data-dir", defaultValue = "walden-data", description = "Data directory (default: ${DEFAULT-VALUE}).")
    Path dataDir;

    @Option(names = "--log", paramLabel = "NAME", defaultValue = "default", description = "The log: default (the log at "
            + "the data directory's root) or a named log, in logs/NAME (default: ${DEFAULT-VALUE}).")
    String log;

    @Option(names = "--from", description = "First LSN to show (X/Y or decimal; default: the oldest record).")
    String from;

    @Option(names = "--to", description = "Stop before this LSN (X/Y or decimal; default: the end of the log).")
    String to;

    @Option(names = "--stats", description = "Print counts and bytes per record type instead of the records.")
    boolean stats;

    @Option(names = "--padding", description = "Also show padding records (segment ends and aborted claims).")
    boolean padding;

    @Override
    public Integer call() throws Exception {
        long fromLsn = from == null ? 0 : Lsn.parse(from);
        long toLsn = to == null ? Long.MAX_VALUE : Lsn.parse(to);
        PrintWriter out = new PrintWriter(System.out, false);
        Map<Integer, long[]> perType = new TreeMap<>(); // type -> {count, record bytes, stored payload bytes, uncompressed}
        LogInspector.Result result = new LogInspector(DataDirLogs.directoryOf(dataDir, log)).inspect(new LogInspector.Visitor() {
            @Override
            public boolean onRecord(LogInspector.RecordInfo r) {
                if (r.lsn() >= toLsn) {
                    return false;
                }
                if (r.lsn() < fromLsn || (r.padding() && !padding)) {
                    return true;
                }
                if (stats) {
                    long[] t = perType.computeIfAbsent(r.padding() ? -1 : r.control() ? -2 : r.type(), k -> new long[4]);
                    t[0]++;
                    t[1] += r.length();
                    t[2] += r.payloadLength();
                    t[3] += Math.max(0, r.uncompressedLength()); // -1: a damaged compressed payload
                } else {
                    out.printf(Locale.ROOT, "lsn: %s, prev: %s, time: %s, len (rec/payload): %d/%d, type: %s, crc: ok%s%n",
                            Lsn.format(r.lsn()), Lsn.format(r.prev()),
                            r.timestamp() == null ? "-" : RecordTime.format(r.timestamp()), r.length(), r.payloadLength(),
                            r.padding() ? "padding" : r.control() ? "control" : Integer.toString(r.type()),
                            r.compression() == Compression.NONE ? "" : ", compression: " + r.compression().configName()
                                    + " (uncompressed " + r.uncompressedLength() + ")");
                }
                return true;
            }
        });
        if (stats) {
            printStats(out, perType);
        }
        out.flush();
        if (!result.clean()) {
            System.err.println("walden dump: stopped at " + Lsn.format(result.problemLsn()) + ": " + result.problem());
            return 1;
        }
        return 0;
    }

    private static void printStats(PrintWriter out, Map<Integer, long[]> perType) {
        long count = 0;
        long bytes = 0;
        for (long[] t : perType.values()) {
            count += t[0];
            bytes += t[1];
        }
        out.printf(Locale.ROOT, "%-10s %12s %9s %16s %9s %16s %16s%n", "Type", "N", "(%)", "Record size", "(%)",
                "Payload size", "Uncompressed");
        out.printf(Locale.ROOT, "%-10s %12s %9s %16s %9s %16s %16s%n", "----", "-", "---", "-----------", "---",
                "------------", "------------");
        for (Map.Entry<Integer, long[]> e : perType.entrySet()) {
            long[] t = e.getValue();
            out.printf(Locale.ROOT, "%-10s %12d (%6.2f) %16d (%6.2f) %16d %16d%n", e.getKey() == -1 ? "padding" : e.getKey() == -2 ? "control" : e.getKey().toString(),
                    t[0], pct(t[0], count), t[1], pct(t[1], bytes), t[2], t[3]);
        }
        out.printf(Locale.ROOT, "%-10s %12d (%6.2f) %16d (%6.2f)%n", "Total", count, count == 0 ? 0.0 : 100.0, bytes,
                bytes == 0 ? 0.0 : 100.0);
    }

    private static double pct(long part, long whole) {
        return whole == 0 ? 0 : 100.0 * part / whole;
    }
}
