package io.walden.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Retention as it stands ({@link WalConfig.Builder#retentionTime}, {@link WalConfig.Builder#retentionBytes};
 * docs/operations.md, "Retention"): its limits, what it removed, and who keeps what it would remove.
 *
 * @param time            the time limit, or null
 * @param bytes           the size limit, or 0
 * @param removedSegments segments removed by retention since the log opened
 * @param heldBy          the holders keeping segments retention would remove, at its last look (empty: none)
 */
public record RetentionStatus(Duration time, long bytes, long removedSegments, List<Held> heldBy) {
    /**
     * One holder keeping back what retention would remove.
     *
     * @param holder  {@code replication_slot}, {@code cursor} or {@code archive}
     * @param bytes   how much of what retention would remove it keeps
     * @param fromLsn the LSN it needs kept
     * @param since   when retention first found it holding (since it last held nothing)
     */
    public record Held(String holder, long bytes, long fromLsn, Instant since) {
    }

    public boolean enabled() {
        return time != null || bytes > 0;
    }
}
