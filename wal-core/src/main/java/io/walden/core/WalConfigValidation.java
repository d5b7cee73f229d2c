package io.walden.core;

import io.walden.core.archive.ArchiveConfig;

import java.time.Duration;

/**
 * The rules a {@link WalConfig.Builder}'s settings must meet to become a {@link WalConfig}. Each concept's record checks
 * its own values ({@link SegmentSettings#check} and the like); what is checked here are the rules across concepts,
 * which no one record can see, and the small checks the records share. Each check either returns normally or throws
 * {@link IllegalSettingException} naming the setting and the value it was given; none changes a value. {@link #check}
 * runs them in one fixed order, so that settings wrong in several ways always report the same one.
 *
 * <p>Thread-safety: stateless; every method from any thread.
 */
final class WalConfigValidation {
    private WalConfigValidation() {
    }

    /** All of them, on the settings as a builder holds them (sizes left at 0 not yet resolved). */
    static void check(SegmentSettings segments, CommitSettings commit, RecoverySettings recovery,
            RetentionSettings retention, CompressionSettings compression, IdentitySettings identity, ArchiveConfig archive) {
        checkAcrossConcepts(segments, identity, archive);
        segments.check();
        commit.check();
        recovery.check();
        retention.check();
        compression.check();
    }

    /**
     * The settings of other concepts that the segment size bounds: the archive's backlog must allow for the current
     * segment, which waits to be sealed (or for the archive timeout) before it is archived; and a log that does not begin
     * at LSN 0 begins at the start of a segment, as every segment file is named by its first LSN.
     */
    private static void checkAcrossConcepts(SegmentSettings segments, IdentitySettings identity, ArchiveConfig archive) {
        long segmentSize = segments.segmentSize();
        if (archive != null && archive.maxPendingBytes() < 2 * segmentSize) {
            // the current segment is archived only once sealed (or after the archive timeout): one more must fit
            throw new IllegalSettingException("archive.maxPendingBytes", "must be at least two segments ("
                    + 2 * segmentSize + " bytes)", archive.maxPendingBytes());
        }
        long baseLsn = identity.baseLsn();
        if (baseLsn < 0 || (baseLsn & (segmentSize - 1)) != 0) {
            throw new IllegalSettingException("baseLsn", "must be the start of a segment (a multiple of " + segmentSize
                    + ")", baseLsn);
        }
    }

    static void requirePositive(Duration value, String name) {
        if (value.isNegative() || value.isZero()) {
            throw new IllegalSettingException(name, "must be positive", value);
        }
    }

    static void requireNonNegative(Duration value, String name) {
        if (value.isNegative()) {
            throw new IllegalSettingException(name, "must be >= 0", value);
        }
    }

    static void requireNonNegative(long value, String name) {
        if (value < 0) {
            throw new IllegalSettingException(name, "must be >= 0", value);
        }
    }
}
