package io.walden.server.cli;

import io.walden.core.WalStore;
import io.walden.server.http.LogPaths;

/**
 * The tools' {@code --log}: a log's name, checked before anything is read or sent, so that a name no log can have (a
 * path, an upper-case letter) is the user's mistake said in one line, never a file outside the data directory.
 */
final class LogName {
    private LogName() {
    }

    /** {@code log} when it is {@value LogPaths#DEFAULT_LOG} or a name a named log may have; null stays null. */
    static String checked(String log) {
        if (log == null || LogPaths.DEFAULT_LOG.equals(log) || WalStore.NAME.matcher(log).matches()) {
            return log;
        }
        throw new UserError("--log: '" + log + "' is not a log name (1 to 128 of a-z 0-9 . _ -, beginning with a letter "
                + "or a digit)");
    }

    /** Whether {@code log} names the log at the data directory's root (none named, or {@value LogPaths#DEFAULT_LOG}). */
    static boolean isDefault(String log) {
        return log == null || LogPaths.DEFAULT_LOG.equals(log);
    }
}
