package io.walden.core;

import java.util.Locale;

/**
 * How a durable append's records reach stable storage (PostgreSQL's {@code wal_sync_method}). Records are written
 * from the WAL buffers into the segment files with {@code pwrite}; then, per method, the files are forced.
 * Segments are fully allocated before use, so data-only syncs suffice for every method that syncs.
 */
public enum SyncMethod {
    /** {@code FileChannel.force(false)}: fdatasync(2) of each segment file the flush covers. The default. */
    FDATASYNC,
    /** {@code FileChannel.force(true)}: fsync(2), also forcing file metadata. */
    FSYNC,
    /**
     * PostgreSQL's {@code open_datasync}: the segment files are written through a channel opened with
     * {@code DSYNC} (O_DSYNC), so each write returns once its data is durable and no separate force is needed. Every
     * write then waits for the disk, the background writer's too.
     */
    OPEN_DATASYNC,
    /**
     * Never force: the operating system writes pages back when it likes. NOTHING is durable across a
     * power failure or kernel crash, whatever the requested {@link Durability}; a JVM crash loses nothing
     * that was written into the files. For tests and for data that can be rebuilt. Opening a log with this method
     * logs a warning.
     */
    NONE;

    /** The lower-case name used in configuration files and flags ({@code open_datasync}). */
    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Parses a configuration word ({@code fdatasync}, {@code fsync}, {@code open_datasync}, {@code none}).
     *
     * @throws IllegalArgumentException naming the word and the choices; for {@code msync}, saying why it is gone
     */
    public static SyncMethod parse(String word) {
        String w = word == null ? "" : word.trim().toLowerCase(Locale.ROOT).replace('-', '_');
        if (w.equals("msync")) {
            throw new IllegalArgumentException("sync method 'msync' no longer exists: records are written from WAL buffers "
                    + "with pwrite, not stored through the mapping, so there is no dirty mapping to msync; use fdatasync "
                    + "(the default) or open_datasync");
        }
        for (SyncMethod m : values()) {
            if (m.configName().equals(w)) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown sync method '" + word + "' (expected fdatasync, fsync, open_datasync or none)");
    }
}
