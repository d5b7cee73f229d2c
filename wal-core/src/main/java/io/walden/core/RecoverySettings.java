package io.walden.core;

import java.time.Duration;
import java.util.Objects;

/**
 * What opening a log after a crash may do and how much it must read: how often the control file records the flushed
 * position (which bounds recovery's scan), whether recovery may cut the log at a bad record below that position, and
 * whether it begins a new epoch at the recovered end (docs/durability.md, docs/replication.md). Each value is explained
 * where it is set, on {@link WalConfig.Builder}'s method of the same name; {@link WalConfig#recoverySettings()} reads
 * them.
 *
 * <p>A value that may not be null is refused when it is set; {@link #check} refuses the rest when the config is built.
 *
 * <p>Thread-safety: immutable.
 *
 * @param checkpointInterval   how often the flushed position is recorded ({@link WalConfig.Builder#checkpointInterval})
 * @param truncateAtCorruption whether recovery may cut at a bad record ({@link WalConfig.Builder#truncateAtCorruption})
 * @param newEpochAfterCrash   whether a crash begins a new epoch ({@link WalConfig.Builder#newEpochAfterCrash})
 */
public record RecoverySettings(Duration checkpointInterval, boolean truncateAtCorruption, boolean newEpochAfterCrash) {
    /** A checkpoint every second; corruption fails the open; no new epoch. */
    static final RecoverySettings DEFAULTS = new RecoverySettings(Duration.ofSeconds(1), false, false);

    public RecoverySettings {
        Objects.requireNonNull(checkpointInterval, "checkpointInterval");
    }

    RecoverySettings withCheckpointInterval(Duration interval) {
        return new RecoverySettings(interval, truncateAtCorruption, newEpochAfterCrash);
    }

    RecoverySettings withTruncateAtCorruption(boolean allow) {
        return new RecoverySettings(checkpointInterval, allow, newEpochAfterCrash);
    }

    RecoverySettings withNewEpochAfterCrash(boolean begin) {
        return new RecoverySettings(checkpointInterval, truncateAtCorruption, begin);
    }

    /** Refuses a checkpoint interval that is not positive. */
    void check() {
        WalConfigValidation.requirePositive(checkpointInterval, "checkpointInterval");
    }
}
