package io.walden.server.config;

import io.walden.core.IllegalSettingException;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.archive.ArchiveConfig;
import io.walden.core.archive.ArchiveTargets;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
import static io.walden.server.config.ServerSettings.MAX_RECORD_SIZE;
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
 * Translates the server's settings into the core library's configurations, the log's {@link WalConfig} and its
 * archive's {@link ArchiveConfig}, and the log's refusal of one back into the server's names ({@link #inServerTerms}).
 *
 * <p>Thread-safety: stateless; called from any thread (the settings it reads are immutable).
 */
final class LogConfigs {
    /**
     * The server's setting behind each {@link WalConfig.Builder} setting (as {@link IllegalSettingException#setting()}
     * names it) that a user's value reaches: the one table from the log's names to the flags and YAML keys.
     */
    private static final Map<String, Setting<?>> BUILDER_SETTINGS = Map.ofEntries(
            Map.entry("segmentSize", SEGMENT_SIZE),
            Map.entry("walBuffers", WAL_BUFFERS),
            Map.entry("maxPayloadSize", MAX_RECORD_SIZE),
            Map.entry("zstdLevel", ZSTD_LEVEL),
            Map.entry("maxCursorRetainedBytes", MAX_CURSOR_RETAINED_BYTES),
            Map.entry("retentionTime", RETENTION_TIME),
            Map.entry("retentionBytes", RETENTION_BYTES),
            Map.entry("syncMethod", SYNC_METHOD),
            Map.entry("remoteCommitTimeout", REMOTE_COMMIT_TIMEOUT),
            Map.entry("writerDelay", WRITER_DELAY),
            Map.entry("checkpointInterval", CHECKPOINT_INTERVAL),
            Map.entry("archive.maxPendingBytes", ARCHIVE_MAX_PENDING_BYTES),
            Map.entry("archive.timeout", ARCHIVE_TIMEOUT));
    private static final Pattern BUILDER_NAME = Pattern.compile("\\b(archive\\.)?[a-z]+[A-Z][A-Za-z]*\\b");

    private LogConfigs() {
    }

    /**
     * The log's refusal of a setting, said in the server's terms: where the user gave it ({@code --segment-size},
     * {@code walden.yaml: segment-size}), what it must be (other settings named by their keys too) and the text given,
     * e.g. {@code --segment-size: must be a power of two from 64 KiB to 1 GiB, not 3MiB}. A setting no user's value
     * reaches is left as the log said it.
     */
    static IllegalArgumentException inServerTerms(IllegalSettingException e, ServerConfig c) {
        Setting<?> s = BUILDER_SETTINGS.get(e.setting());
        ConfigSources.Given given = s == null ? null : c.given(s);
        if (given == null) {
            return e;
        }
        Matcher names = BUILDER_NAME.matcher(e.requirement());
        StringBuilder requirement = new StringBuilder();
        while (names.find()) {
            Setting<?> named = BUILDER_SETTINGS.get(names.group());
            names.appendReplacement(requirement, Matcher.quoteReplacement(named == null ? names.group() : named.key()));
        }
        names.appendTail(requirement);
        return new IllegalArgumentException(given.where() + ": " + requirement + ", not " + given.text(), e);
    }

    /** The log's settings, to be completed (a new replica takes its primary's log id, segment size and base LSN). */
    static WalConfig.Builder walConfigBuilder(ServerConfig c) {
        WalConfig.Builder b = WalConfig.builder(c.dataDir())
                .name(ServerConfig.DEFAULT_LOG) // in its meters' log tag, beside the named logs'
                .segmentSize(segmentSize(c));
        applyServerSettings(c, b);
        return b;
    }

    /**
     * Every named log's defaults (the log {@code default}'s settings, but for the segment size of the log already at
     * the data directory's root, which is that log's alone).
     */
    static void namedLogDefaults(ServerConfig c, WalConfig.Builder b) {
        if (c.get(SEGMENT_SIZE) != null) {
            b.segmentSize(c.get(SEGMENT_SIZE));
        }
        applyServerSettings(c, b);
        if (c.get(WAL_BUFFERS) == null) {
            // Smaller than the log default's: a busy named log holds its WAL buffers and one largest record's slack
            // from the budget (wal-buffers-budget), about 8 MiB here rather than 48, so that 128 busy logs fit in
            // 1 GiB rather than 21; its largest record is then about 4 MiB unless max-record-size asks for more
            // (docs/operations.md, "Named logs").
            b.walBuffers(ringFor(c.get(MAX_RECORD_SIZE) == null ? 0 : PerLogSettings.maxRecordSize(c.get(MAX_RECORD_SIZE))));
        }
    }

    /** A named log's WAL buffers when {@code wal-buffers} is not set. */
    static final long NAMED_LOG_WAL_BUFFERS = 4L << 20;

    /** The WAL buffers of a named log whose largest record is {@code maxRecord} bytes (0: the default). */
    static long ringFor(int maxRecord) {
        return Math.max(NAMED_LOG_WAL_BUFFERS, maxRecord == 0 ? 0 : WalConfig.smallestWalBuffersFor(maxRecord));
    }

    /** The server's settings every log takes, but its segment size. */
    private static void applyServerSettings(ServerConfig c, WalConfig.Builder b) {
        // A primary that crashed begins a new epoch at its recovered end: its replicas may hold records it
        // shipped before flushing and then lost (docs/replication.md, "Shipping before the flush").
        // A member of a group begins an epoch when it is elected, never on its own at open.
        b.newEpochAfterCrash(c.get(REPLICATE_FROM) == null && c.get(COORDINATOR) == null)
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
        if (c.get(MAX_RECORD_SIZE) != null) {
            b.maxPayloadSize(PerLogSettings.maxRecordSize(c.get(MAX_RECORD_SIZE)));
        }
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
