package io.walden.core.archive;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * How a log is archived: where, how soon a quiet segment's tail follows, and what happens when the archive falls
 * too far behind. Immutable.
 */
public final class ArchiveConfig {

    /** What a log does when more than {@link #maxPendingBytes()} are not archived (the store is failing). */
    public enum WhenFull {
        /** Refuse appends with {@link io.walden.core.AppendsBlockedException} until archiving catches up (default). */
        BLOCK,
        /** Give up archiving the oldest pending segments (logged and counted) so appends go on: the archive gets a gap. */
        DROP_ARCHIVE;

        /** Parses {@code block} or {@code drop-archive}. */
        public static WhenFull parse(String s) {
            switch (s.trim().toLowerCase(Locale.ROOT)) {
                case "block":
                    return BLOCK;
                case "drop-archive":
                    return DROP_ARCHIVE;
                default:
                    throw new IllegalArgumentException("archive full policy is block or drop-archive, not '" + s + "'");
            }
        }
    }

    private final ArchiveTarget target;
    private final Duration timeout;
    private final long maxPendingBytes;
    private final WhenFull whenFull;
    private final Duration retryMin;
    private final Duration retryMax;

    private ArchiveConfig(Builder b) {
        this.target = b.target;
        this.timeout = b.timeout;
        this.maxPendingBytes = b.maxPendingBytes;
        this.whenFull = b.whenFull;
        this.retryMin = b.retryMin;
        this.retryMax = b.retryMax;
    }

    public static Builder builder(ArchiveTarget target) {
        return new Builder(target);
    }

    /** Where segments go. The log never closes it: whoever opened it closes it, after the log. */
    public ArchiveTarget target() {
        return target;
    }

    /**
     * These settings for another log, archiving under {@code prefix} of the same target ({@link ArchiveTarget#under}: the
     * same client, closed with this config's target, never by the other log).
     *
     * @throws IllegalArgumentException when {@code prefix} is not names each followed by {@code /}
     */
    public ArchiveConfig under(String prefix) {
        return builder(target.under(prefix)).timeout(timeout).maxPendingBytes(maxPendingBytes).whenFull(whenFull)
                .retry(retryMin, retryMax).build();
    }

    /** The current segment's records reach the archive at most this long after they were flushed; zero: only sealed segments. */
    public Duration timeout() {
        return timeout;
    }

    /** Flushed bytes not yet archived beyond which {@link #whenFull()} applies. */
    public long maxPendingBytes() {
        return maxPendingBytes;
    }

    public WhenFull whenFull() {
        return whenFull;
    }

    /** The first wait after a failed upload; it doubles per failure up to {@link #retryMax()}. */
    public Duration retryMin() {
        return retryMin;
    }

    public Duration retryMax() {
        return retryMax;
    }

    public static final class Builder {
        private final ArchiveTarget target;
        private Duration timeout = Duration.ofSeconds(60);
        private long maxPendingBytes = 4L << 30;
        private WhenFull whenFull = WhenFull.BLOCK;
        private Duration retryMin = Duration.ofMillis(100);
        private Duration retryMax = Duration.ofSeconds(30);

        private Builder(ArchiveTarget target) {
            this.target = Objects.requireNonNull(target, "target");
        }

        /** PostgreSQL's {@code archive_timeout} (default 60 s; zero archives only sealed segments). */
        public Builder timeout(Duration timeout) {
            if (timeout.isNegative()) {
                throw new IllegalArgumentException("archive timeout must not be negative: " + timeout);
            }
            this.timeout = timeout;
            return this;
        }

        /** Default 4 GiB; at least two segments (checked when the log opens). */
        public Builder maxPendingBytes(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("max pending archive bytes must be positive: " + bytes);
            }
            this.maxPendingBytes = bytes;
            return this;
        }

        public Builder whenFull(WhenFull policy) {
            this.whenFull = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /** Backoff between failed uploads (defaults 100 ms doubling to 30 s). */
        public Builder retry(Duration min, Duration max) {
            if (min.isNegative() || min.isZero() || max.compareTo(min) < 0) {
                throw new IllegalArgumentException("retry backoff needs 0 < min <= max: " + min + ", " + max);
            }
            this.retryMin = min;
            this.retryMax = max;
            return this;
        }

        public ArchiveConfig build() {
            return new ArchiveConfig(this);
        }
    }
}
