package io.walden.server.cli;

import io.walden.core.WalStore;
import io.walden.core.internal.segment.SegmentFiles;
import io.walden.server.logs.LogCatalog;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The logs of a server's data directory (docs/operations.md, "Named logs on disk"): the log named {@code default} is the
 * plain log at the directory's root; named log {@code orders} lives in {@code logs/orders} of the {@link WalStore} that
 * shares the directory (its journal in {@code journal/}, its lock {@code walden-store.lock}). What the store keeps
 * beside the root log is no file of the root log's (none ends in {@code .wal}), so the root log's tools read it as
 * they always did.
 *
 * <p>Thread-safety: stateless.
 */
final class DataDirLogs {
    private DataDirLogs() {
    }

    /** The directory of {@code --log}'s log (checked: a user's mistake when the data directory has no such log). */
    static Path directoryOf(Path dataDir, String log) throws IOException {
        if (!Files.isDirectory(dataDir)) {
            throw new UserError("--data-dir " + dataDir + ": " + (Files.exists(dataDir) ? "not a directory" : "no such directory"));
        }
        if (LogName.isDefault(LogName.checked(log))) {
            return dataDir;
        }
        Path dir = named(dataDir, log);
        if (!Files.isDirectory(dir)) {
            List<String> named = named(dataDir);
            throw new UserError("--log " + log + ": no such log in " + dataDir + " (" + (named.isEmpty()
                    ? "it holds no named logs" : "its named logs: " + String.join(", ", named)) + ")");
        }
        return dir;
    }

    /** Where named log {@code log} of {@code dataDir} lives: {@code logs/<log>} of the store there. */
    static Path named(Path dataDir, String log) {
        return dataDir.resolve(WalStore.LOGS).resolve(log);
    }

    /** The names of the named logs in {@code dataDir}, sorted; none when it holds no store. */
    static List<String> named(Path dataDir) throws IOException {
        return LogCatalog.namesOnDisk(dataDir);
    }

    /** Whether the root of {@code dataDir} holds a log (a segment file): a store's directory alone holds none. */
    static boolean hasRootLog(Path dataDir) throws IOException {
        return !SegmentFiles.list(dataDir).isEmpty();
    }

    /** The store's journal in {@code dataDir}, or null when it has none. */
    static Path journal(Path dataDir) {
        Path j = dataDir.resolve(WalStore.JOURNAL);
        return Files.isDirectory(j) ? j : null;
    }
}
