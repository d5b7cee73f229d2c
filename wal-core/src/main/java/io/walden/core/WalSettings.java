package io.walden.core;

import io.walden.core.archive.ArchiveConfig;
import io.walden.core.internal.sync.SyncStrategy;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;

/**
 * The values of a {@link WalConfig}, each declared once, with its default: a {@link WalConfig.Builder} sets them on
 * its own instance, and every {@link WalConfig} holds a {@link #copy} of that taken when it was built, which nothing
 * writes once the config's constructor has returned. {@code maxPayloadSize} and {@code walBuffers} are 0 ("the
 * default") until the config resolves them (see {@link WalConfigSizes}). Every value is itself immutable or, for
 * {@code syncStrategy}, shared as given, so a shallow copy is a full one.
 *
 * <p>Thread-safety: none of its own. A builder's instance belongs to that builder, which is not thread-safe either;
 * a config's copy is written only before the config's constructor returns and is reached only through the config's
 * final field, so it is published as safely as a final field is (JLS 17.5), to any thread.
 */
final class WalSettings implements Cloneable {
    final Path directory;
    long segmentSize = WalConfig.DEFAULT_SEGMENT_SIZE;
    int maxPayloadSize;
    long walBuffers;
    SyncMethod syncMethod = SyncMethod.FDATASYNC;
    SyncStrategy syncStrategy;
    Durability durability = Durability.ON;
    Compression compression = Compression.NONE;
    boolean zstdDictionary = true;
    int zstdLevel = WalConfig.DEFAULT_ZSTD_LEVEL;
    long maxCursorRetainedBytes = 4L << 30;
    ArchiveConfig archive;
    Duration writerDelay = Duration.ofMillis(200);
    Duration offWriteDelay = Duration.ofMillis(2);
    Duration checkpointInterval = Duration.ofSeconds(1);
    int spareSegments = 2;
    boolean truncateAtCorruption;
    Duration commitDelay = Duration.ZERO;
    int commitSiblings = 5;
    Duration remoteCommitTimeout = Duration.ZERO;
    long logId;
    long baseLsn;
    boolean newEpochAfterCrash;
    Clock clock = Clock.systemUTC();
    Duration retentionTime;
    long retentionBytes;

    WalSettings(Path directory) {
        this.directory = directory;
    }

    WalSettings copy() {
        try {
            return (WalSettings) clone();
        } catch (CloneNotSupportedException e) {
            throw new AssertionError("WalSettings is Cloneable", e);
        }
    }

    /** What {@link WalConfig#toString()} shows. */
    String describe() {
        WalSettings s = this;
        return "WalConfig{directory=" + s.directory + ", segmentSize=" + s.segmentSize + ", maxPayloadSize="
                + s.maxPayloadSize + ", walBuffers=" + s.walBuffers + ", syncMethod=" + s.syncMethod
                + (s.syncStrategy != null ? " (custom " + s.syncStrategy + ")" : "")
                + ", durability=" + s.durability.configName() + ", compression=" + s.compression.configName()
                + (s.compression == Compression.ZSTD ? " (level " + s.zstdLevel + ")" : "")
                + ", writerDelay=" + s.writerDelay.toMillis() + "ms, checkpointInterval="
                + s.checkpointInterval.toMillis() + "ms, spareSegments=" + s.spareSegments + ", truncateAtCorruption="
                + s.truncateAtCorruption + ", commitDelay=" + s.commitDelay.toNanos() / 1000 + "us, commitSiblings="
                + s.commitSiblings + (s.retentionTime != null ? ", retentionTime=" + s.retentionTime : "")
                + (s.retentionBytes > 0 ? ", retentionBytes=" + s.retentionBytes : "") + "}";
    }
}
