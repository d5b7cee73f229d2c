package io.walden.core;

import java.time.Duration;

/**
 * What the log removes on its own and what holds it back: retention by the records' age and by the log's size (Kafka's
 * {@code retention.ms} and {@code retention.bytes}), and the most log a consumer cursor may keep from removal
 * (docs/operations.md, "Retention"). Each value is explained where it is set, on {@link WalConfig.Builder}'s method of
 * the same name; {@link WalConfig#retentionSettings()} reads them.
 *
 * <p>A negative cursor cap is refused when it is set (as its builder method always did); {@link #check} refuses the
 * rest when the config is built.
 *
 * <p>Thread-safety: immutable.
 *
 * @param retentionTime          sealed segments whose records are all older are removed; null: no limit
 *                               ({@link WalConfig.Builder#retentionTime})
 * @param retentionBytes         the oldest sealed segments are removed while the log holds more; 0: no limit
 *                               ({@link WalConfig.Builder#retentionBytes})
 * @param maxCursorRetainedBytes the most log a cursor may hold back from removal
 *                               ({@link WalConfig.Builder#maxCursorRetainedBytes})
 */
public record RetentionSettings(Duration retentionTime, long retentionBytes, long maxCursorRetainedBytes) {
    /** Keep everything (but what a cursor lagging over 4 GiB behind holds). */
    static final RetentionSettings DEFAULTS = new RetentionSettings(null, 0, 4L << 30);

    public RetentionSettings {
        WalConfigValidation.requireNonNegative(maxCursorRetainedBytes, "maxCursorRetainedBytes");
    }

    RetentionSettings withRetentionTime(Duration age) {
        return new RetentionSettings(age, retentionBytes, maxCursorRetainedBytes);
    }

    RetentionSettings withRetentionBytes(long bytes) {
        return new RetentionSettings(retentionTime, bytes, maxCursorRetainedBytes);
    }

    RetentionSettings withMaxCursorRetainedBytes(long bytes) {
        return new RetentionSettings(retentionTime, retentionBytes, bytes);
    }

    /** Refuses an age that is not positive and a negative size. */
    void check() {
        if (retentionTime != null) {
            WalConfigValidation.requirePositive(retentionTime, "retentionTime");
        }
        WalConfigValidation.requireNonNegative(retentionBytes, "retentionBytes");
    }
}
