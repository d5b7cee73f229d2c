package io.walden.core;

import io.walden.core.commit.WalBuffers;
import io.walden.core.record.RecordDescriptor;
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
    /**
     * The default size of the WAL buffers, 32 MiB (or the segment size, when that is smaller): twice PostgreSQL's
     * largest default {@code wal_buffers}, so that the default largest record (16 MiB) fits with room to spare.
     */
    public static final long DEFAULT_WAL_BUFFERS = 32L << 20;

    private final Path directory;
    private final long segmentSize;
    private final int maxPayloadSize;
    private final long walBuffers;
    private final SyncMethod syncMethod;
    private final SyncStrategy syncStrategy;
    private final Durability durability;
    private final Compression compression;
    private final boolean zstdDictionary;
    private final long maxCursorRetainedBytes;
    private final io.walden.core.archive.ArchiveConfig archive;
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
    private final boolean newEpochAfterCrash;

    private WalConfig(Builder b) {
        this.baseLsn = b.baseLsn;
        this.directory = b.directory;
        this.segmentSize = b.segmentSize;
        this.maxPayloadSize = b.maxPayloadSize > 0 ? b.maxPayloadSize : defaultMaxPayload(b.segmentSize, b.walBuffers);
        this.walBuffers = b.walBuffers > 0 ? b.walBuffers : defaultWalBuffers(b.segmentSize, maxPayloadSize);
        this.syncMethod = b.syncMethod;
        this.syncStrategy = b.syncStrategy;
        this.durability = b.durability;
        this.compression = b.compression;
        this.zstdDictionary = b.zstdDictionary;
        this.maxCursorRetainedBytes = b.maxCursorRetainedBytes;
        this.archive = b.archive;
        this.writerDelay = b.writerDelay;
        this.offWriteDelay = b.offWriteDelay;
        this.checkpointInterval = b.checkpointInterval;
        this.spareSegments = b.spareSegments;
        this.truncateAtCorruption = b.truncateAtCorruption;
        this.commitDelay = b.commitDelay;
        this.commitSiblings = b.commitSiblings;
        this.remoteCommitTimeout = b.remoteCommitTimeout;
        this.logId = b.logId;
        this.newEpochAfterCrash = b.newEpochAfterCrash;
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

    /** 16 MiB, or less when the segments (or WAL buffers chosen explicitly, if not 0) could not hold it. */
    private static int defaultMaxPayload(long segmentSize, long walBuffers) {
        int max = Math.min(DEFAULT_MAX_PAYLOAD, largestPayloadFor(segmentSize));
        if (walBuffers > 0) {
            long ringRoom = (walBuffers - 2L * RecordDescriptor.HEADER_LENGTH) & ~7L;
            max = (int) Math.min(max, ringRoom);
        }
        return max;
    }

    /**
     * The smallest WAL buffers that can hold a record of {@code maxPayload} bytes: the record, aligned, and the next
     * record's header (where its prev link is written ahead), rounded up to a power of two.
     */
    public static long smallestWalBuffersFor(int maxPayload) {
        long need = RecordDescriptor.aligned(RecordDescriptor.recordLength(maxPayload)) + RecordDescriptor.HEADER_LENGTH;
        return Math.max(WalBuffers.MIN_CAPACITY, Long.highestOneBit(need - 1) << 1);
    }

    private static long defaultWalBuffers(long segmentSize, int maxPayload) {
        return Math.max(Math.min(DEFAULT_WAL_BUFFERS, segmentSize), smallestWalBuffersFor(maxPayload));
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

    /** Bytes of WAL buffers (see {@link Builder#walBuffers}). */
    public long walBuffers() {
        return walBuffers;
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

    /** The most log a cursor may hold back from truncation (default 4 GiB); see {@link Cursors}. */
    public long maxCursorRetainedBytes() {
        return maxCursorRetainedBytes;
    }

    /** Where and how sealed segments are archived, or null when they are not (see {@link io.walden.core.archive.Archiver}). */
    public io.walden.core.archive.ArchiveConfig archive() {
        return archive;
    }

    /** How appends that choose none store their payloads (default {@link Compression#NONE}). */
    public Compression compression() {
        return compression;
    }

    /** Whether small zstd payloads are compressed with a dictionary the log trains and carries (default true). */
    public boolean zstdDictionary() {
        return zstdDictionary;
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

    /** Whether opening the log after a crash begins a new epoch at its recovered end (see the builder). */
    public boolean newEpochAfterCrash() {
        return newEpochAfterCrash;
    }

    /** How long a remote-level commit waits for the synchronous replicas; zero waits forever. */
    public Duration remoteCommitTimeout() {
        return remoteCommitTimeout;
    }

    @Override
    public String toString() {
        return "WalConfig{directory=" + directory + ", segmentSize=" + segmentSize + ", maxPayloadSize="
                + maxPayloadSize + ", walBuffers=" + walBuffers + ", syncMethod=" + syncMethod + (syncStrategy != null ? " (custom " + syncStrategy + ")" : "")
                + ", durability=" + durability.configName() + ", compression=" + compression.configName() + ", writerDelay=" + writerDelay.toMillis() + "ms, checkpointInterval="
                + checkpointInterval.toMillis() + "ms, spareSegments=" + spareSegments + ", truncateAtCorruption="
                + truncateAtCorruption + ", commitDelay=" + commitDelay.toNanos() / 1000 + "us, commitSiblings="
                + commitSiblings + "}";
    }

    /** Collects settings; {@link #build()} validates them together. Not thread-safe. */
    public static final class Builder {
        private final Path directory;
        private long segmentSize = DEFAULT_SEGMENT_SIZE;
        private int maxPayloadSize;
        private long walBuffers;
        private SyncMethod syncMethod = SyncMethod.FDATASYNC;
        private SyncStrategy syncStrategy;
        private Durability durability = Durability.ON;
        private Compression compression = Compression.NONE;
        private boolean zstdDictionary = true;
        private long maxCursorRetainedBytes = 4L << 30;
        private io.walden.core.archive.ArchiveConfig archive;
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
        private boolean newEpochAfterCrash;

        private Builder(Path directory) {
            this.directory = Objects.requireNonNull(directory, "directory");
        }

        /** Segment file size: a power of two from 64 KiB to 1 GiB (default 64 MiB). Fixed when the log is created. */
        public Builder segmentSize(long bytes) {
            this.segmentSize = bytes;
            return this;
        }

        /**
         * Largest payload accepted; default 16 MiB, or what the segment size (and the WAL buffers, when set) allow if
         * that is less.
         */
        public Builder maxPayloadSize(int bytes) {
            this.maxPayloadSize = bytes;
            return this;
        }

        /**
         * Size of the WAL buffers (PostgreSQL's {@code wal_buffers}): the ring of native memory, outside the Java heap,
         * that appenders copy records into before the flush leader or the background writer writes them into the
         * files. A power of two from 64 KiB to 1 GiB that holds the largest record ({@link #smallestWalBuffersFor});
         * default 32 MiB, or the segment size if smaller. When the ring is smaller than a segment, the log also keeps
         * one largest record's worth of slack after it (docs/group-commit.md, "WAL buffers"). A full ring is written
         * out by the appender that needs room; a larger one absorbs longer bursts of {@code OFF} appends.
         */
        public Builder walBuffers(long bytes) {
            this.walBuffers = bytes;
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

        /**
         * The log's default compression (PostgreSQL's {@code wal_compression}): used by every append that does not
         * choose one. A payload is stored compressed only when that saves space (see {@link Compression}); logs
         * holding compressed records need this version or later to be read.
         */
        public Builder compression(Compression codec) {
            this.compression = Objects.requireNonNull(codec, "compression");
            return this;
        }

        /**
         * Whether zstd payloads of up to 64 KiB are compressed with a dictionary (docs/format.md, "zstd dictionaries"):
         * the log samples its first zstd payloads (1 MiB), trains a 16 KiB dictionary on them in the background, and
         * stores a copy of it in every segment that holds a record compressed with it; reopened, it takes up the newest
         * copy its last segment holds. Small JSON events
         * then store in well under half the bytes zstd alone needs (docs/benchmarks.md). Default true; segments under
         * 16 KiB never use one. Logs holding such records need this version or later to be read.
         */
        public Builder zstdDictionary(boolean enabled) {
            this.zstdDictionary = enabled;
            return this;
        }

        /**
         * Archives every sealed segment to {@code archive}'s target, and never truncates one before it is archived
         * (docs/operations.md, "Backup and restore"). Default: no archiving. The log does not close the target.
         */
        public Builder archive(io.walden.core.archive.ArchiveConfig archive) {
            this.archive = archive;
            return this;
        }

        /**
         * The most log a cursor may hold back from truncation: a cursor lagging further lets truncation pass it and is
         * then lost (its reader fails; logged and counted), so a forgotten consumer never fills the disk. Default 4 GiB.
         */
        public Builder maxCursorRetainedBytes(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("maxCursorRetainedBytes must be >= 0, got " + bytes);
            }
            this.maxCursorRetainedBytes = bytes;
            return this;
        }

        /** Level used by {@link Wal#append(byte[])} and the appends that name none; default {@link Durability#ON}. */
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

        /**
         * For a primary whose replicas receive records once they are written here, before they are flushed (the
         * default of {@code ReplicationServer}): when the log was not closed cleanly, opening it begins a new epoch
         * at its recovered end, durably, before anything can be appended. A crash of the machine may lose records a
         * replica already holds; the new epoch tells that replica where its copy stopped being this log's, and it
         * rewinds to there (docs/replication.md, "Shipping before the flush"). Off by default; never on for a
         * replica's log, which follows its primary's epochs.
         */
        public Builder newEpochAfterCrash(boolean begin) {
            this.newEpochAfterCrash = begin;
            return this;
        }

        public WalConfig build() {
            if (archive != null && archive.maxPendingBytes() < 2 * segmentSize) {
                throw new IllegalArgumentException("the archive's max pending bytes (" + archive.maxPendingBytes()
                        + ") must be at least two segments (" + 2 * segmentSize + "): the current segment is archived "
                        + "only when sealed or after the archive timeout");
            }
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
            int payload = maxPayloadSize > 0 ? maxPayloadSize : defaultMaxPayload(segmentSize, walBuffers);
            if (walBuffers != 0 && (walBuffers < WalBuffers.MIN_CAPACITY || walBuffers > WalBuffers.MAX_CAPACITY
                    || Long.bitCount(walBuffers) != 1)) {
                throw new IllegalArgumentException("walBuffers must be a power of two from 64 KiB to 1 GiB, got " + walBuffers);
            }
            if (walBuffers != 0 && walBuffers < smallestWalBuffersFor(payload)) {
                throw new IllegalArgumentException("walBuffers of " + walBuffers + " bytes cannot hold a record of "
                        + payload + " bytes (maxPayloadSize): use at least " + smallestWalBuffersFor(payload)
                        + " or a smaller maxPayloadSize");
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
