package io.walden.core;

import io.walden.core.sync.SyncStrategy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Everything {@link Wal#open(WalConfig)} needs. Built with {@link #builder(Path)}; immutable and
 * thread-safe once built. Defaults are the safe ones: durability {@code ON}, fdatasync, 64 MiB segments.
 */
public final class WalConfig {
    /** The default segment size, 64 MiB. */
    public static final long DEFAULT_SEGMENT_SIZE = 64L << 20;
    /** Smallest segment size accepted, 64 KiB. */
    public static final long MIN_SEGMENT_SIZE = 64L << 10;
    /** Largest segment size accepted, 1 GiB. */
    public static final long MAX_SEGMENT_SIZE = 1L << 30;
    /** The default maximum payload, 16 MiB (or less, when a smaller segment could not hold it). */
    public static final int DEFAULT_MAX_PAYLOAD = 16 << 20;

    private final Path directory;
    private final long segmentSize;
    private final int maxPayloadSize;
    private final SyncMethod syncMethod;
    private final SyncStrategy syncStrategy;
    private final Durability durability;
    private final Duration writerDelay;
    private final Duration offWriteDelay;
    private final Duration checkpointInterval;
    private final int spareSegments;
    private final boolean truncateAtCorruption;
    private final Duration commitDelay;
    private final int commitSiblings;
    private final Duration remoteCommitTimeout;
    private final long logId;
    private final long baseLsn;

    private WalConfig(Builder b) {
        this.baseLsn = b.baseLsn;
        this.directory = b.directory;
        this.segmentSize = b.segmentSize;
        this.maxPayloadSize = b.maxPayloadSize > 0 ? b.maxPayloadSize : defaultMaxPayload(b.segmentSize);
        this.syncMethod = b.syncMethod;
        this.syncStrategy = b.syncStrategy;
        this.durability = b.durability;
        this.writerDelay = b.writerDelay;
        this.offWriteDelay = b.offWriteDelay;
        this.checkpointInterval = b.checkpointInterval;
        this.spareSegments = b.spareSegments;
        this.truncateAtCorruption = b.truncateAtCorruption;
        this.commitDelay = b.commitDelay;
        this.commitSiblings = b.commitSiblings;
        this.remoteCommitTimeout = b.remoteCommitTimeout;
        this.logId = b.logId;
    }

    public static Builder builder(Path directory) {
        return new Builder(directory);
    }

    /** The largest payload a segment of {@code segmentSize} bytes can take beside its header, a record
     *  header and the closing record every segment keeps room for (see docs/format.md). */
    public static int largestPayloadFor(long segmentSize) {
        long room = segmentSize - io.walden.core.segment.SegmentHeaderDescriptor.LENGTH
                - 2L * io.walden.core.record.RecordDescriptor.HEADER_LENGTH;
        return (int) Math.min(Integer.MAX_VALUE - 64, room & ~7L);
    }

    private static int defaultMaxPayload(long segmentSize) {
        return Math.min(DEFAULT_MAX_PAYLOAD, largestPayloadFor(segmentSize));
    }

    public Path directory() {
        return directory;
    }

    public long segmentSize() {
        return segmentSize;
    }

    public int maxPayloadSize() {
        return maxPayloadSize;
    }

    public SyncMethod syncMethod() {
        return syncMethod;
    }

    /** A custom force strategy replacing the one {@link #syncMethod()} names, or null. */
    public SyncStrategy syncStrategy() {
        return syncStrategy;
    }

    public Durability durability() {
        return durability;
    }

    public Duration writerDelay() {
        return writerDelay;
    }

    /** The longest an {@code OFF} record waits in the WAL buffers before it is written into its file. */
    public Duration offWriteDelay() {
        return offWriteDelay;
    }

    public Duration checkpointInterval() {
        return checkpointInterval;
    }

    public int spareSegments() {
        return spareSegments;
    }

    public boolean truncateAtCorruption() {
        return truncateAtCorruption;
    }

    public Duration commitDelay() {
        return commitDelay;
    }

    public int commitSiblings() {
        return commitSiblings;
    }

    /** The log id a new log must take (a replica copying a primary), or 0 for a random one; an existing log must match. */
    public long logId() {
        return logId;
    }

    /** Where a new log begins (a segment boundary; 0 unless a replica copies a primary that truncated). */
    public long baseLsn() {
        return baseLsn;
    }

    /** How long a remote-level commit waits for the synchronous replicas; zero waits forever. */
    public Duration remoteCommitTimeout() {
        return remoteCommitTimeout;
    }

    @Override
    public String toString() {
        return "WalConfig{directory=" + directory + ", segmentSize=" + segmentSize + ", maxPayloadSize="
                + maxPayloadSize + ", syncMethod=" + syncMethod + (syncStrategy != null ? " (custom " + syncStrategy + ")" : "")
                + ", durability=" + durability.configName() + ", writerDelay=" + writerDelay.toMillis() + "ms, checkpointInterval="
                + checkpointInterval.toMillis() + "ms, spareSegments=" + spareSegments + ", truncateAtCorruption="
                + truncateAtCorruption + ", commitDelay=" + commitDelay.toNanos() / 1000 + "us, commitSiblings="
                + commitSiblings + "}";
    }

    /** Collects settings; {@link #build()} validates them together. Not thread-safe. */
    public static final class Builder {
        private final Path directory;
        private long segmentSize = DEFAULT_SEGMENT_SIZE;
        private int maxPayloadSize;
        private SyncMethod syncMethod = SyncMethod.FDATASYNC;
        private SyncStrategy syncStrategy;
        private Durability durability = Durability.ON;
        private Duration writerDelay = Duration.ofMillis(200);
        private Duration offWriteDelay = Duration.ofMillis(2);
        private Duration checkpointInterval = Duration.ofSeconds(1);
        private int spareSegments = 2;
        private boolean truncateAtCorruption;
        private Duration commitDelay = Duration.ZERO;
        private int commitSiblings = 5;
        private Duration remoteCommitTimeout = Duration.ZERO;
        private long logId;
        private long baseLsn;

        private Builder(Path directory) {
            this.directory = Objects.requireNonNull(directory, "directory");
        }

        /**
         * Segment file size: a power of two from 64 KiB to 1 GiB (default 64 MiB). Fixed when the log is created. The
         * log's WAL buffers hold two to three segments' worth of native memory, outside the Java heap
         * (docs/group-commit.md, "WAL buffers"): choose smaller segments for many small logs in one process.
         */
        public Builder segmentSize(long bytes) {
            this.segmentSize = bytes;
            return this;
        }

        /** Largest payload accepted; default 16 MiB, or what the segment size allows if that is less. */
        public Builder maxPayloadSize(int bytes) {
            this.maxPayloadSize = bytes;
            return this;
        }

        public Builder syncMethod(SyncMethod method) {
            this.syncMethod = Objects.requireNonNull(method, "syncMethod");
            return this;
        }

        /** Replaces the built-in strategy for {@link #syncMethod(SyncMethod)}; for instrumentation and fault injection. */
        public Builder syncStrategy(SyncStrategy strategy) {
            this.syncStrategy = strategy;
            return this;
        }

        /** Level used by {@link Wal#append(byte[])}; default {@link Durability#ON}. */
        public Builder durability(Durability level) {
            this.durability = Objects.requireNonNull(level, "durability");
            return this;
        }

        /**
         * The longest an {@code OFF} record waits in the WAL buffers before the background writer writes it into its
         * file (default 2 ms; capped at {@link #writerDelay}): from then on it survives the death of the process,
         * though not of the machine until it is forced.
         */
        public Builder offWriteDelay(Duration delay) {
            this.offWriteDelay = Objects.requireNonNull(delay, "offWriteDelay");
            return this;
        }

        /** Longest time an {@code OFF} record waits for the background writer's force (PostgreSQL's wal_writer_delay). */
        public Builder writerDelay(Duration delay) {
            this.writerDelay = Objects.requireNonNull(delay, "writerDelay");
            return this;
        }

        /** How often the control file records the flushed position (bounds recovery's scan; see docs/durability.md). */
        public Builder checkpointInterval(Duration interval) {
            this.checkpointInterval = Objects.requireNonNull(interval, "checkpointInterval");
            return this;
        }

        /** Truncated segments kept for reuse (renamed, not re-created); default 2. */
        public Builder spareSegments(int count) {
            this.spareSegments = count;
            return this;
        }

        /**
         * Lets recovery cut the log at a bad record even when it lies below the last recorded flush point,
         * discarding everything after it. Off by default: such damage is corruption and open fails.
         */
        public Builder truncateAtCorruption(boolean allow) {
            this.truncateAtCorruption = allow;
            return this;
        }

        /** PostgreSQL's commit_delay: a flush leader waits this long to gather more commits. Default 0. */
        public Builder commitDelay(Duration delay) {
            this.commitDelay = Objects.requireNonNull(delay, "commitDelay");
            return this;
        }

        /** PostgreSQL's commit_siblings: commitDelay applies only with at least this many other committers waiting. */
        public Builder commitSiblings(int siblings) {
            this.commitSiblings = siblings;
            return this;
        }

        /**
         * How long a commit at a remote level waits for the synchronous replicas before failing with
         * {@link RemoteCommitTimeoutException} (the record stays durable locally). Default zero: wait as long
         * as it takes, as PostgreSQL does.
         */
        public Builder remoteCommitTimeout(Duration timeout) {
            this.remoteCommitTimeout = Objects.requireNonNull(timeout, "remoteCommitTimeout");
            return this;
        }

        /**
         * Creates a new log with this identifier instead of a random one (a replica copying a primary, whose
         * segments must be byte-identical); opening an existing log with another id fails. 0: any.
         */
        public Builder logId(long id) {
            this.logId = id;
            return this;
        }

        /**
         * Where a NEW log begins instead of LSN 0: the start of a segment. For a replica whose primary no longer keeps
         * its first segments: the replica's log begins at the segment holding the primary's oldest record, and holds
         * nothing before it (PostgreSQL's base backup). The first record streamed into it may then link to any record
         * before it. Ignored when the directory already holds a log.
         */
        public Builder baseLsn(long lsn) {
            this.baseLsn = lsn;
            return this;
        }

        public WalConfig build() {
            if (baseLsn < 0 || (baseLsn & (segmentSize - 1)) != 0) {
                throw new IllegalArgumentException("baseLsn must be the start of a segment (a multiple of " + segmentSize
                        + "), got " + baseLsn);
            }
            if (segmentSize < MIN_SEGMENT_SIZE || segmentSize > MAX_SEGMENT_SIZE || Long.bitCount(segmentSize) != 1) {
                throw new IllegalArgumentException("segmentSize must be a power of two from 64 KiB to 1 GiB, got " + segmentSize);
            }
            int largest = largestPayloadFor(segmentSize);
            if (maxPayloadSize < 0 || maxPayloadSize > largest) {
                throw new IllegalArgumentException("maxPayloadSize must be from 1 to " + largest
                        + " bytes for segments of " + segmentSize + " bytes, got " + maxPayloadSize);
            }
            if (offWriteDelay.isNegative() || offWriteDelay.isZero()) {
                throw new IllegalArgumentException("offWriteDelay must be positive, got " + offWriteDelay);
            }
            if (writerDelay.isNegative() || writerDelay.isZero()) {
                throw new IllegalArgumentException("writerDelay must be positive, got " + writerDelay);
            }
            if (checkpointInterval.isNegative() || checkpointInterval.isZero()) {
                throw new IllegalArgumentException("checkpointInterval must be positive, got " + checkpointInterval);
            }
            if (spareSegments < 0) {
                throw new IllegalArgumentException("spareSegments must be >= 0, got " + spareSegments);
            }
            if (commitDelay.isNegative() || commitDelay.compareTo(Duration.ofSeconds(1)) > 0) {
                throw new IllegalArgumentException("commitDelay must be from 0 to 1 s, got " + commitDelay);
            }
            if (remoteCommitTimeout.isNegative()) {
                throw new IllegalArgumentException("remoteCommitTimeout must be >= 0, got " + remoteCommitTimeout);
            }
            if (commitSiblings < 0) {
                throw new IllegalArgumentException("commitSiblings must be >= 0, got " + commitSiblings);
            }
            return new WalConfig(this);
        }
    }
}
