package io.walden.core;

/**
 * How a durable append's records are forced to stable storage (PostgreSQL's {@code wal_sync_method}).
 * Segments are fully allocated before use, so data-only syncs are sufficient for every method that syncs.
 */
public enum SyncMethod {
    /** {@code FileChannel.force(false)}: fdatasync(2) of each segment file the flush covers. The default. */
    FDATASYNC,
    /** {@code FileChannel.force(true)}: fsync(2), also forcing file metadata. */
    FSYNC,
    /** msync(2) with {@code MS_SYNC} of only the dirty byte range of the mapping. */
    MSYNC,
    /**
     * Never force: the operating system writes pages back when it likes. NOTHING is durable across a
     * power failure or kernel crash, whatever the requested {@link Durability}; a JVM crash loses nothing.
     * For tests and for data that can be rebuilt. Opening a log with this method logs a warning.
     */
    NONE
}
