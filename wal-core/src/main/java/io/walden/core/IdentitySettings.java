package io.walden.core;

/**
 * Which log this is and where it begins: what a replica copying a primary sets so that its segments are byte-identical
 * to the primary's, and left at 0 otherwise. Each value is explained where it is set, on {@link WalConfig.Builder}'s
 * method of the same name; {@link WalConfig#identitySettings()} reads them. A {@link WalStore} does not keep them among
 * a log's own settings ({@code walden.log-settings}): the log's files hold its id and where it begins.
 *
 * <p>Thread-safety: immutable.
 *
 * @param logId   the id a new log takes, which an existing log must have; 0: any ({@link WalConfig.Builder#logId})
 * @param baseLsn where a new log begins, the start of a segment ({@link WalConfig.Builder#baseLsn})
 */
public record IdentitySettings(long logId, long baseLsn) {
    /** A random id, from LSN 0. */
    static final IdentitySettings DEFAULTS = new IdentitySettings(0, 0);

    IdentitySettings withLogId(long id) {
        return new IdentitySettings(id, baseLsn);
    }

    IdentitySettings withBaseLsn(long lsn) {
        return new IdentitySettings(logId, lsn);
    }
}
