package io.walden.core;

import com.github.luben.zstd.Zstd;
import io.walden.core.internal.commit.WalBuffers;

import java.time.Duration;

/**
 * The rules a {@link WalConfig.Builder}'s settings must meet to become a {@link WalConfig}. Each check either returns
 * normally or throws {@link IllegalSettingException} naming the setting and the value it was given; none changes a
 * value. {@link #check} runs them in one fixed order, so that settings wrong in several ways always report the same
 * one.
 *
 * <p>Thread-safety: stateless; every method from any thread.
 */
final class WalConfigValidation {
    private WalConfigValidation() {
    }

    /** All of them, on the settings as a builder holds them (sizes left at 0 not yet resolved). */
    static void check(WalSettings s) {
        checkSizes(s);
        requirePositive(s.offWriteDelay, "offWriteDelay");
        requirePositive(s.writerDelay, "writerDelay");
        requirePositive(s.checkpointInterval, "checkpointInterval");
        requireNonNegative(s.spareSegments, "spareSegments");
        checkCommitDelay(s.commitDelay);
        requireNonNegative(s.remoteCommitTimeout, "remoteCommitTimeout");
        requireNonNegative(s.commitSiblings, "commitSiblings");
        if (s.retentionTime != null) {
            requirePositive(s.retentionTime, "retentionTime");
        }
        requireNonNegative(s.retentionBytes, "retentionBytes");
        if (s.zstdLevel == 0 || s.zstdLevel < Zstd.minCompressionLevel()
                || s.zstdLevel > Zstd.maxCompressionLevel()) {
            throw new IllegalSettingException("zstdLevel", "must be between " + Zstd.minCompressionLevel()
                    + " and " + Zstd.maxCompressionLevel() + ", and not 0", s.zstdLevel);
        }
    }

    /**
     * The sizes together, as set ({@code maxPayloadSize} and {@code walBuffers} 0 for the default): each bounds
     * another, and the archive's backlog must allow for the current segment, which waits to be sealed (or for the
     * archive timeout) before it is archived.
     */
    private static void checkSizes(WalSettings s) {
        if (s.archive != null && s.archive.maxPendingBytes() < 2 * s.segmentSize) {
            // the current segment is archived only once sealed (or after the archive timeout): one more must fit
            throw new IllegalSettingException("archive.maxPendingBytes", "must be at least two segments ("
                    + 2 * s.segmentSize + " bytes)", s.archive.maxPendingBytes());
        }
        if (s.baseLsn < 0 || (s.baseLsn & (s.segmentSize - 1)) != 0) {
            throw new IllegalSettingException("baseLsn", "must be the start of a segment (a multiple of " + s.segmentSize
                    + ")", s.baseLsn);
        }
        if (s.segmentSize < WalConfig.MIN_SEGMENT_SIZE || s.segmentSize > WalConfig.MAX_SEGMENT_SIZE
                || Long.bitCount(s.segmentSize) != 1) {
            throw new IllegalSettingException("segmentSize", "must be a power of two from 64 KiB to 1 GiB", s.segmentSize);
        }
        int largest = WalConfigSizes.largestPayloadFor(s.segmentSize);
        if (s.maxPayloadSize < 0 || s.maxPayloadSize > largest) {
            throw new IllegalSettingException("maxPayloadSize", "must be from 1 to " + largest
                    + " bytes for segments of " + s.segmentSize + " bytes (segmentSize)", s.maxPayloadSize);
        }
        int payload = WalConfigSizes.maxPayloadSize(s.segmentSize, s.maxPayloadSize, s.walBuffers);
        if (s.walBuffers != 0 && (s.walBuffers < WalBuffers.MIN_CAPACITY || s.walBuffers > WalBuffers.MAX_CAPACITY
                || Long.bitCount(s.walBuffers) != 1)) {
            throw new IllegalSettingException("walBuffers", "must be a power of two from 64 KiB to 1 GiB", s.walBuffers);
        }
        long smallest = WalConfigSizes.smallestWalBuffersFor(payload);
        if (s.walBuffers != 0 && s.walBuffers < smallest) {
            throw new IllegalSettingException("walBuffers", "cannot hold a record of " + payload + " bytes (maxPayloadSize): "
                    + "use at least " + smallest + " bytes or a smaller maxPayloadSize", s.walBuffers);
        }
    }

    /** Bounded: the flush leader sleeps this long before a flush that its waiting committers need (docs/group-commit.md). */
    private static void checkCommitDelay(Duration commitDelay) {
        if (commitDelay.isNegative() || commitDelay.compareTo(Duration.ofSeconds(1)) > 0) {
            throw new IllegalSettingException("commitDelay", "must be from 0 to 1 s", commitDelay);
        }
    }

    private static void requirePositive(Duration value, String name) {
        if (value.isNegative() || value.isZero()) {
            throw new IllegalSettingException(name, "must be positive", value);
        }
    }

    private static void requireNonNegative(Duration value, String name) {
        if (value.isNegative()) {
            throw new IllegalSettingException(name, "must be >= 0", value);
        }
    }

    /** Returns {@code value}, for setters that check as they set. */
    static long requireNonNegative(long value, String name) {
        if (value < 0) {
            throw new IllegalSettingException(name, "must be >= 0", value);
        }
        return value;
    }
}
