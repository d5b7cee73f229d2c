package io.walden.core;

import io.walden.core.archive.ArchiveConfig;
import io.walden.core.internal.sync.SyncOverride;
import io.walden.core.internal.sync.SyncStrategy;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;

/**
 * Everything {@link Wal#open(WalConfig)} needs. Built with {@link #builder(Path)}; immutable and
 * thread-safe once built. Defaults are the safe ones: durability {@code ON}, fdatasync, 64 MiB segments.
 *
 * <p>Thread-safety: immutable once built; every method from any thread. The {@link Builder} is not thread-safe.
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
    /**
     * The default zstd level, 1: in CompressionLoad it stores within 2 % of level 3 for about 7 % less CPU
     * (docs/benchmarks.md).
     */
    public static final int DEFAULT_ZSTD_LEVEL = 1;

    static {
        SyncOverride.install(new SyncOverride.Access() {
            @Override
            public SyncStrategy strategy(WalConfig config) {
                return config.syncStrategy();
            }

            @Override
            public void strategy(Builder builder, SyncStrategy strategy) {
                builder.syncStrategy(strategy);
            }
        });
    }

    /** This config's own copy, with the default sizes resolved: written only here, before the constructor returns. */
    private final WalSettings settings;

    private WalConfig(WalSettings chosen) {
        WalSettings s = chosen.copy();
        // Payload first: its default is bounded by WAL buffers set explicitly, and the default WAL buffers must hold it.
        s.maxPayloadSize = WalConfigSizes.maxPayloadSize(s.segmentSize, s.maxPayloadSize, s.walBuffers);
        s.walBuffers = WalConfigSizes.walBuffers(s.segmentSize, s.maxPayloadSize, s.walBuffers);
        this.settings = s;
    }

    public static Builder builder(Path directory) {
        return new Builder(directory);
    }

    /** The largest payload a segment of {@code segmentSize} bytes can take beside its header, a record
     *  header and the closing record every segment keeps room for (see docs/format.md). */
    public static int largestPayloadFor(long segmentSize) {
        return WalConfigSizes.largestPayloadFor(segmentSize);
    }

    /**
     * The smallest WAL buffers that can hold a record of {@code maxPayload} bytes: the record, aligned, and the next
     * record's header (where its prev link is written ahead), rounded up to a power of two.
     */
    public static long smallestWalBuffersFor(int maxPayload) {
        return WalConfigSizes.smallestWalBuffersFor(maxPayload);
    }

    public Path directory() {
        return settings.directory;
    }

    public long segmentSize() {
        return settings.segmentSize;
    }

    public int maxPayloadSize() {
        return settings.maxPayloadSize;
    }

    /** Bytes of WAL buffers (see {@link Builder#walBuffers}). */
    public long walBuffers() {
        return settings.walBuffers;
    }

    public SyncMethod syncMethod() {
        return settings.syncMethod;
    }

    /**
     * A force strategy replacing the one {@link #syncMethod()} names, or null: internal (a store's journal, a test's
     * injected fault), reached through {@link SyncOverride}.
     */
    SyncStrategy syncStrategy() {
        return settings.syncStrategy;
    }

    public Durability durability() {
        return settings.durability;
    }

    /** The most log a cursor may hold back from truncation (default 4 GiB); see {@link Cursors}. */
    public long maxCursorRetainedBytes() {
        return settings.maxCursorRetainedBytes;
    }

    /** Where and how sealed segments are archived, or null when they are not (see {@link io.walden.core.archive.ArchiverStatus}). */
    public ArchiveConfig archive() {
        return settings.archive;
    }

    /** How appends that choose none store their payloads (default {@link Compression#NONE}). */
    public Compression compression() {
        return settings.compression;
    }

    /** Whether small zstd payloads are compressed with a dictionary the log trains and carries (default true). */
    public boolean zstdDictionary() {
        return settings.zstdDictionary;
    }

    /** The zstd level of {@link Compression#ZSTD} payloads (default 1). */
    public int zstdLevel() {
        return settings.zstdLevel;
    }

    public Duration writerDelay() {
        return settings.writerDelay;
    }

    /** The longest an {@code OFF} record waits in the WAL buffers before it is written into its file. */
    public Duration offWriteDelay() {
        return settings.offWriteDelay;
    }

    public Duration checkpointInterval() {
        return settings.checkpointInterval;
    }

    public int spareSegments() {
        return settings.spareSegments;
    }

    public boolean truncateAtCorruption() {
        return settings.truncateAtCorruption;
    }

    public Duration commitDelay() {
        return settings.commitDelay;
    }

    public int commitSiblings() {
        return settings.commitSiblings;
    }

    /** The log id a new log must take (a replica copying a primary), or 0 for a random one; an existing log must match. */
    public long logId() {
        return settings.logId;
    }

    /** Where a new log begins (a segment boundary; 0 unless a replica copies a primary that truncated). */
    public long baseLsn() {
        return settings.baseLsn;
    }

    /** Whether opening the log after a crash begins a new epoch at its recovered end (see the builder). */
    public boolean newEpochAfterCrash() {
        return settings.newEpochAfterCrash;
    }

    /** How long a remote-level commit waits for the synchronous replicas; zero waits forever. */
    public Duration remoteCommitTimeout() {
        return settings.remoteCommitTimeout;
    }

    @Override
    public String toString() {
        return settings.describe();
    }

    /** The wall clock records' times are read from (the system's UTC clock unless a test set another). */
    public Clock clock() {
        return settings.clock;
    }

    /** Sealed segments whose records are all older than this are removed (null: no limit); see the builder. */
    public Duration retentionTime() {
        return settings.retentionTime;
    }

    /** Oldest sealed segments are removed while the log holds more bytes than this (0: no limit); see the builder. */
    public long retentionBytes() {
        return settings.retentionBytes;
    }

    /**
     * Collects settings; {@link #build()} validates them together. Each config built takes its own copy, so the
     * builder may be changed and built again without changing the configs it built before.
     *
     * <p>Thread-safety: none; one thread at a time.
     */
    public static final class Builder {
        /** Mutated by the setters; never shared with a config, which copies it. */
        private final WalSettings settings;

        private Builder(Path directory) {
            this.settings = new WalSettings(Objects.requireNonNull(directory, "directory"));
        }

        /** Segment file size: a power of two from 64 KiB to 1 GiB (default 64 MiB). Fixed when the log is created. */
        public Builder segmentSize(long bytes) {
            settings.segmentSize = bytes;
            return this;
        }

        /**
         * Largest payload accepted; default 16 MiB, or what the segment size (and the WAL buffers, when set) allow if
         * that is less.
         */
        public Builder maxPayloadSize(int bytes) {
            settings.maxPayloadSize = bytes;
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
            settings.walBuffers = bytes;
            return this;
        }

        public Builder syncMethod(SyncMethod method) {
            settings.syncMethod = Objects.requireNonNull(method, "syncMethod");
            return this;
        }

        /**
         * The wall clock records' times come from (default: the system's UTC clock). For tests and simulations: a
         * clock that steps back never makes times decrease in LSN order (see {@link WalRecord#timestamp()}).
         */
        public Builder clock(Clock clock) {
            settings.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * Time-based retention (Kafka's {@code retention.ms}): whole sealed segments are removed, oldest first, once
         * every record in them is older than {@code age}, unless a replication slot, a consumer cursor or the
         * archiver still needs them (docs/operations.md, "Retention"). Null (the default) keeps everything.
         */
        public Builder retentionTime(Duration age) {
            settings.retentionTime = age;
            return this;
        }

        /**
         * Size-based retention (Kafka's {@code retention.bytes}): while the log's segments hold more than
         * {@code bytes}, the oldest sealed segment is removed, with the same holders as {@link #retentionTime}. The
         * segment being written is never removed, so a log may hold up to one segment more. 0 (the default) keeps
         * everything.
         */
        public Builder retentionBytes(long bytes) {
            settings.retentionBytes = bytes;
            return this;
        }

        /** Replaces the built-in strategy for {@link #syncMethod(SyncMethod)}: see {@link WalConfig#syncStrategy()}. */
        Builder syncStrategy(SyncStrategy strategy) {
            settings.syncStrategy = strategy;
            return this;
        }

        /**
         * The log's default compression (PostgreSQL's {@code wal_compression}): used by every append that does not
         * choose one. A payload is stored compressed only when that saves space (see {@link Compression}); logs
         * holding compressed records need this version or later to be read.
         */
        public Builder compression(Compression codec) {
            settings.compression = Objects.requireNonNull(codec, "compression");
            return this;
        }

        /**
         * Whether zstd payloads of up to 64 KiB are compressed with a dictionary (docs/format.md, "zstd dictionaries"):
         * the log samples its first zstd payloads (up to 1 MiB), trains a dictionary of up to 16 KiB on them in the
         * background (both at most a fraction of a segment, so that a dictionary fits beside the records it serves),
         * and stores a copy of it in every segment that holds a record compressed with it; reopened, it takes up the
         * newest copy its last segment holds. Small JSON events then store in well under half the bytes zstd alone
         * needs (docs/benchmarks.md). Default true. Logs holding such records need this version or later to be read.
         */
        public Builder zstdDictionary(boolean enabled) {
            settings.zstdDictionary = enabled;
            return this;
        }

        /**
         * The zstd level {@link Compression#ZSTD} payloads are compressed at (Kafka's {@code compression.zstd.level}):
         * from zstd's fastest negative levels to 22; default 1. On small JSON events level 1 stores within 2 % of
         * zstd's own default, 3, in less time, which the committers pay on the append path; levels past 9 cost many
         * times the CPU for a percent or two (docs/benchmarks.md). Readers need no setting: a frame decompresses the
         * same at any level, and a log may be reopened at another.
         */
        public Builder zstdLevel(int level) {
            settings.zstdLevel = level;
            return this;
        }

        /**
         * Archives every sealed segment to {@code archive}'s target, and never truncates one before it is archived
         * (docs/operations.md, "Backup and restore"). Default: no archiving. The log does not close the target.
         */
        public Builder archive(ArchiveConfig archive) {
            settings.archive = archive;
            return this;
        }

        /**
         * The most log a cursor may hold back from truncation: a cursor lagging further lets truncation pass it and is
         * then lost (its reader fails; logged and counted), so a forgotten consumer never fills the disk. Default 4 GiB.
         */
        public Builder maxCursorRetainedBytes(long bytes) {
            settings.maxCursorRetainedBytes = WalConfigValidation.requireNonNegative(bytes, "maxCursorRetainedBytes");
            return this;
        }

        /** Level used by {@link Wal#append(byte[])} and the appends that name none; default {@link Durability#ON}. */
        public Builder durability(Durability level) {
            settings.durability = Objects.requireNonNull(level, "durability");
            return this;
        }

        /**
         * The longest an {@code OFF} record waits in the WAL buffers before the background writer writes it into its
         * file (default 2 ms; capped at {@link #writerDelay}): from then on it survives the death of the process,
         * though not of the machine until it is forced.
         */
        public Builder offWriteDelay(Duration delay) {
            settings.offWriteDelay = Objects.requireNonNull(delay, "offWriteDelay");
            return this;
        }

        /** Longest time an {@code OFF} record waits for the background writer's force (PostgreSQL's wal_writer_delay). */
        public Builder writerDelay(Duration delay) {
            settings.writerDelay = Objects.requireNonNull(delay, "writerDelay");
            return this;
        }

        /** How often the control file records the flushed position (bounds recovery's scan; see docs/durability.md). */
        public Builder checkpointInterval(Duration interval) {
            settings.checkpointInterval = Objects.requireNonNull(interval, "checkpointInterval");
            return this;
        }

        /** Truncated segments kept for reuse (renamed, not re-created); default 2. */
        public Builder spareSegments(int count) {
            settings.spareSegments = count;
            return this;
        }

        /**
         * Lets recovery cut the log at a bad record even when it lies below the last recorded flush point,
         * discarding everything after it. Off by default: such damage is corruption and open fails.
         */
        public Builder truncateAtCorruption(boolean allow) {
            settings.truncateAtCorruption = allow;
            return this;
        }

        /** PostgreSQL's commit_delay: a flush leader waits this long to gather more commits. Default 0. */
        public Builder commitDelay(Duration delay) {
            settings.commitDelay = Objects.requireNonNull(delay, "commitDelay");
            return this;
        }

        /** PostgreSQL's commit_siblings: commitDelay applies only with at least this many other committers waiting. */
        public Builder commitSiblings(int siblings) {
            settings.commitSiblings = siblings;
            return this;
        }

        /**
         * How long a commit at a remote level waits for the synchronous replicas before failing with
         * {@link RemoteCommitTimeoutException} (the record stays durable locally). Default zero: wait as long
         * as it takes, as PostgreSQL does.
         */
        public Builder remoteCommitTimeout(Duration timeout) {
            settings.remoteCommitTimeout = Objects.requireNonNull(timeout, "remoteCommitTimeout");
            return this;
        }

        /**
         * Creates a new log with this identifier instead of a random one (a replica copying a primary, whose
         * segments must be byte-identical); opening an existing log with another id fails. 0: any.
         */
        public Builder logId(long id) {
            settings.logId = id;
            return this;
        }

        /**
         * Where a NEW log begins instead of LSN 0: the start of a segment. For a replica whose primary no longer keeps
         * its first segments: the replica's log begins at the segment holding the primary's oldest record, and holds
         * nothing before it (PostgreSQL's base backup). The first record streamed into it may then link to any record
         * before it. Ignored when the directory already holds a log.
         */
        public Builder baseLsn(long lsn) {
            settings.baseLsn = lsn;
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
            settings.newEpochAfterCrash = begin;
            return this;
        }

        public WalConfig build() {
            WalConfigValidation.check(settings);
            return new WalConfig(settings);
        }

        /** The values set so far (a store compares them with its defaults to keep a log's own). */
        WalSettings settings() {
            return settings;
        }
    }
}
