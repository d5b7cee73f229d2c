package io.walden.server.config;

import io.walden.core.WalConfig;
import io.walden.core.archive.ArchiveConfig;
import io.walden.core.archive.ArchiveTargets;
import io.walden.core.recovery.ControlFile;

import java.io.IOException;
import java.time.Duration;

/**
 * Translates the server's settings into the core library's configurations: the log's {@link WalConfig} and its
 * archive's {@link ArchiveConfig}.
 *
 * <p>Thread-safety: stateless; called from any thread (the settings it reads are immutable).
 */
final class LogConfigs {
    private LogConfigs() {
    }

    private static int zstdLevel(Settings s) {
        try {
            return Integer.parseInt(s.get("zstd-level").trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("zstd-level is a zstd level (1 to 22, or negative for faster), not '"
                    + s.get("zstd-level") + "'");
        }
    }

    /** The log's settings, to be completed (a new replica takes its primary's log id, segment size and base LSN). */
    static WalConfig.Builder walConfigBuilder(ServerConfig c, Settings s) {
        WalConfig.Builder b = WalConfig.builder(c.dataDir())
                // A primary that crashed begins a new epoch at its recovered end: its replicas may hold records it
                // shipped before flushing and then lost (docs/replication.md, "Shipping before the flush").
                // A member of a group begins an epoch when it is elected, never on its own at open.
                .newEpochAfterCrash(c.replicateFrom() == null && c.coordinator() == null)
                .segmentSize(segmentSize(c, s))
                .durability(c.durability())
                .compression(c.compression())
                .zstdDictionary(s.bool("zstd-dictionary"))
                .zstdLevel(zstdLevel(s))
                .maxCursorRetainedBytes(s.positive("max-cursor-retained-bytes"))
                .syncMethod(c.syncMethod())
                .remoteCommitTimeout(Duration.ofMillis(Long.parseLong(s.get("remote-commit-timeout-ms"))))
                .writerDelay(Duration.ofMillis(s.positive("writer-delay-ms")));
        if (s.get("wal-buffers") != null) {
            b.walBuffers(s.positive("wal-buffers"));
        }
        return b;
    }

    /**
     * The archive's settings with its target opened (an S3 client), or null when archive-to is not set. The caller
     * hands it to the log, which closes the target.
     */
    static ArchiveConfig archiveConfig(ServerConfig c, Settings s) {
        if (c.archiveTo() == null) {
            return null;
        }
        return ArchiveConfig.builder(ArchiveTargets.open(c.archiveTo(), s.get("archive-endpoint")))
                .timeout(c.archiveTimeout())
                .maxPendingBytes(s.positive("archive-max-pending-bytes"))
                .whenFull(ArchiveConfig.WhenFull.parse(s.get("archive-when-full")))
                .build();
    }

    /**
     * The segment size applies to a new log; when none is given and the directory already holds a log, that log's
     * size is used (it cannot change), so a plain restart never fails on it.
     */
    private static long segmentSize(ServerConfig c, Settings s) {
        String given = s.get("segment-size");
        if (given != null) {
            try {
                return Long.parseLong(given.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("segment-size must be a number of bytes, got '" + given + "'", e);
            }
        }
        if (ControlFile.exists(c.dataDir())) {
            try (ControlFile cf = ControlFile.open(c.dataDir())) {
                return cf.read().segmentSize();
            } catch (IOException e) {
                // an unreadable control file is the log's business: Wal.open reports it properly
            }
        }
        return WalConfig.DEFAULT_SEGMENT_SIZE;
    }
}
