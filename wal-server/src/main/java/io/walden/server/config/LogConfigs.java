package io.walden.server.config;

import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.archive.ArchiveConfig;
import io.walden.core.archive.ArchiveTargets;

import static io.walden.server.config.ServerSettings.ARCHIVE_ENDPOINT;
import static io.walden.server.config.ServerSettings.ARCHIVE_MAX_PENDING_BYTES;
import static io.walden.server.config.ServerSettings.ARCHIVE_TIMEOUT;
import static io.walden.server.config.ServerSettings.ARCHIVE_TO;
import static io.walden.server.config.ServerSettings.ARCHIVE_WHEN_FULL;
import static io.walden.server.config.ServerSettings.CHECKPOINT_INTERVAL;
import static io.walden.server.config.ServerSettings.COMPRESSION;
import static io.walden.server.config.ServerSettings.COORDINATOR;
import static io.walden.server.config.ServerSettings.DURABILITY;
import static io.walden.server.config.ServerSettings.MAX_CURSOR_RETAINED_BYTES;
import static io.walden.server.config.ServerSettings.RETENTION_BYTES;
import static io.walden.server.config.ServerSettings.RETENTION_TIME;
import static io.walden.server.config.ServerSettings.REMOTE_COMMIT_TIMEOUT;
import static io.walden.server.config.ServerSettings.REPLICATE_FROM;
import static io.walden.server.config.ServerSettings.SEGMENT_SIZE;
import static io.walden.server.config.ServerSettings.SYNC_METHOD;
import static io.walden.server.config.ServerSettings.WAL_BUFFERS;
import static io.walden.server.config.ServerSettings.WRITER_DELAY;
import static io.walden.server.config.ServerSettings.ZSTD_DICTIONARY;
import static io.walden.server.config.ServerSettings.ZSTD_LEVEL;

/**
 * Translates the server's settings into the core library's configurations: the log's {@link WalConfig} and its
 * archive's {@link ArchiveConfig}.
 *
 * <p>Thread-safety: stateless; called from any thread (the settings it reads are immutable).
 */
final class LogConfigs {
    private LogConfigs() {
    }

    /** The log's settings, to be completed (a new replica takes its primary's log id, segment size and base LSN). */
    static WalConfig.Builder walConfigBuilder(ServerConfig c) {
        WalConfig.Builder b = WalConfig.builder(c.dataDir())
                // A primary that crashed begins a new epoch at its recovered end: its replicas may hold records it
                // shipped before flushing and then lost (docs/replication.md, "Shipping before the flush").
                // A member of a group begins an epoch when it is elected, never on its own at open.
                .newEpochAfterCrash(c.get(REPLICATE_FROM) == null && c.get(COORDINATOR) == null)
                .segmentSize(segmentSize(c))
                .durability(c.get(DURABILITY))
                .compression(c.get(COMPRESSION))
                .zstdDictionary(c.get(ZSTD_DICTIONARY))
                .zstdLevel(c.get(ZSTD_LEVEL))
                .maxCursorRetainedBytes(c.get(MAX_CURSOR_RETAINED_BYTES))
                .retentionTime(c.get(RETENTION_TIME))
                .retentionBytes(c.get(RETENTION_BYTES) == null ? 0 : c.get(RETENTION_BYTES))
                .syncMethod(c.get(SYNC_METHOD))
                .remoteCommitTimeout(c.get(REMOTE_COMMIT_TIMEOUT))
                .writerDelay(c.get(WRITER_DELAY))
                .checkpointInterval(c.get(CHECKPOINT_INTERVAL));
        if (c.get(WAL_BUFFERS) != null) {
            b.walBuffers(c.get(WAL_BUFFERS));
        }
        return b;
    }

    /**
     * The archive's settings with its target opened (an S3 client), or null when archive-to is not set. The caller
     * hands it to the log, which closes the target.
     */
    static ArchiveConfig archiveConfig(ServerConfig c) {
        if (c.get(ARCHIVE_TO) == null) {
            return null;
        }
        return ArchiveConfig.builder(ArchiveTargets.open(c.get(ARCHIVE_TO), c.get(ARCHIVE_ENDPOINT)))
                .timeout(c.get(ARCHIVE_TIMEOUT))
                .maxPendingBytes(c.get(ARCHIVE_MAX_PENDING_BYTES))
                .whenFull(c.get(ARCHIVE_WHEN_FULL))
                .build();
    }

    /**
     * The segment size applies to a new log; when none is given and the directory already holds a log, that log's
     * size is used (it cannot change), so a plain restart never fails on it.
     */
    private static long segmentSize(ServerConfig c) {
        Long given = c.get(SEGMENT_SIZE);
        if (given != null) {
            return given;
        }
        return Wal.segmentSizeOf(c.dataDir()).orElse(WalConfig.DEFAULT_SEGMENT_SIZE);
    }
}
