package io.walden.core;

import io.walden.core.archive.ArchiveConfig;
import io.walden.core.internal.sync.SyncOverride;
import io.walden.core.internal.sync.SyncStrategy;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Everything {@link Wal#open(WalConfig)} needs. Built with {@link #builder(Path)}; immutable and
 * thread-safe once built. Defaults are the safe ones: durability {@code ON}, fdatasync, 64 MiB segments.
 *
 * <p>The settings are grouped by concept, each group an immutable record that holds its values and checks its own
 * rules: the segments and their sizes ({@link SegmentSettings}), commits ({@link CommitSettings}), recovery
 * ({@link RecoverySettings}), retention ({@link RetentionSettings}), compression ({@link CompressionSettings}) and the
 * log's identity ({@link IdentitySettings}); the archive has its own ({@link ArchiveConfig}). The builder sets each
 * value by name and the config composes the records; the rules between concepts are checked in one place
 * ({@link WalConfigValidation}). A new setting is a component of its concept's record and a builder method. Every value
 * is also read by name here ({@link #segmentSize()} and the like), as the builder sets it.
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
    /** How long a log's end stays where it is before the log is idle, by default (see {@link Builder#idleAfter}). */
    public static final Duration DEFAULT_IDLE_AFTER = Duration.ofSeconds(5);

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

    private final Path directory;
    /** With the default sizes resolved. */
    private final SegmentSettings segments;
    private final CommitSettings commit;
    private final RecoverySettings recovery;
    private final RetentionSettings retention;
    private final CompressionSettings compression;
    private final IdentitySettings identity;
    private final ArchiveConfig archive;
    private final Clock clock;
    private final SyncStrategy syncStrategy;
    /** The log's name in its meters and log lines (see {@link Builder#name}). */
    private final String name;
    private final Duration idleAfter;

    /** Takes the builder's values as they are now: each is immutable, so later changes to the builder do not reach it. */
    private WalConfig(Builder b) {
        this.directory = b.directory;
        this.segments = b.segments.resolved();
        this.commit = b.commit;
        this.recovery = b.recovery;
        this.retention = b.retention;
        this.compression = b.compression;
        this.identity = b.identity;
        this.archive = b.archive;
        this.clock = b.clock;
        this.syncStrategy = b.syncStrategy;
        this.name = b.name != null ? b.name : String.valueOf(b.directory.getFileName());
        this.idleAfter = b.idleAfter;
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
        return directory;
    }

    /** The log's name in its meters' {@code log} tag: as {@link Builder#name} set it, else its directory's name. */
    public String name() {
        return name;
    }

    /** The segments and the sizes of what they take, the defaults resolved (see {@link SegmentSettings}). */
    public SegmentSettings segmentSettings() {
        return segments;
    }

    /** How appends become durable (see {@link CommitSettings}). */
    public CommitSettings commitSettings() {
        return commit;
    }

    /** What opening the log after a crash may do and must read (see {@link RecoverySettings}). */
    public RecoverySettings recoverySettings() {
        return recovery;
    }

    /** What the log removes on its own and what holds it back (see {@link RetentionSettings}). */
    public RetentionSettings retentionSettings() {
        return retention;
    }

    /** How payloads are stored (see {@link CompressionSettings}). */
    public CompressionSettings compressionSettings() {
        return compression;
    }

    /** Which log this is and where it begins (see {@link IdentitySettings}). */
    public IdentitySettings identitySettings() {
        return identity;
    }

    public long segmentSize() {
        return segments.segmentSize();
    }

    public int maxPayloadSize() {
        return segments.maxPayloadSize();
    }

    /** Bytes of WAL buffers (see {@link Builder#walBuffers}). */
    public long walBuffers() {
        return segments.walBuffers();
    }

    public SyncMethod syncMethod() {
        return commit.syncMethod();
    }

    /**
     * A force strategy replacing the one {@link #syncMethod()} names, or null: internal (a store's journal, a test's
     * injected fault), reached through {@link SyncOverride}.
     */
    SyncStrategy syncStrategy() {
        return syncStrategy;
    }

    public Durability durability() {
        return commit.durability();
    }

    /** The most log a cursor may hold back from truncation (default 4 GiB); see {@link Cursors}. */
    public long maxCursorRetainedBytes() {
        return retention.maxCursorRetainedBytes();
    }

    /** Where and how sealed segments are archived, or null when they are not (see {@link io.walden.core.archive.ArchiverStatus}). */
    public ArchiveConfig archive() {
        return archive;
    }

    /** How appends that choose none store their payloads (default {@link Compression#NONE}). */
    public Compression compression() {
        return compression.compression();
    }

    /** Whether small zstd payloads are compressed with a dictionary the log trains and carries (default true). */
    public boolean zstdDictionary() {
        return compression.zstdDictionary();
    }

    /** The zstd level of {@link Compression#ZSTD} payloads (default 1). */
    public int zstdLevel() {
        return compression.zstdLevel();
    }

    public Duration writerDelay() {
        return commit.writerDelay();
    }

    /** The longest an {@code OFF} record waits in the WAL buffers before it is written into its file. */
    public Duration offWriteDelay() {
        return commit.offWriteDelay();
    }

    public Duration checkpointInterval() {
        return recovery.checkpointInterval();
    }

    public int spareSegments() {
        return segments.spareSegments();
    }

    public boolean truncateAtCorruption() {
        return recovery.truncateAtCorruption();
    }

    public Duration commitDelay() {
        return commit.commitDelay();
    }

    public int commitSiblings() {
        return commit.commitSiblings();
    }

    /** The log id a new log must take (a replica copying a primary), or 0 for a random one; an existing log must match. */
    public long logId() {
        return identity.logId();
    }

    /** Where a new log begins (a segment boundary; 0 unless a replica copies a primary that truncated). */
    public long baseLsn() {
        return identity.baseLsn();
    }

    /** Whether opening the log after a crash begins a new epoch at its recovered end (see the builder). */
    public boolean newEpochAfterCrash() {
        return recovery.newEpochAfterCrash();
    }

    /** How long a remote-level commit waits for the synchronous replicas; zero waits forever. */
    public Duration remoteCommitTimeout() {
        return commit.remoteCommitTimeout();
    }

    @Override
    public String toString() {
        return "WalConfig{directory=" + directory + ", segmentSize=" + segmentSize() + ", maxPayloadSize="
                + maxPayloadSize() + ", walBuffers=" + walBuffers() + ", syncMethod=" + syncMethod()
                + (syncStrategy != null ? " (custom " + syncStrategy + ")" : "")
                + ", durability=" + durability().configName() + ", compression=" + compression().configName()
                + (compression() == Compression.ZSTD ? " (level " + zstdLevel() + ")" : "")
                + ", writerDelay=" + writerDelay().toMillis() + "ms, checkpointInterval="
                + checkpointInterval().toMillis() + "ms, spareSegments=" + spareSegments() + ", truncateAtCorruption="
                + truncateAtCorruption() + ", commitDelay=" + commitDelay().toNanos() / 1000 + "us, commitSiblings="
                + commitSiblings() + (retentionTime() != null ? ", retentionTime=" + retentionTime() : "")
                + (retentionBytes() > 0 ? ", retentionBytes=" + retentionBytes() : "") + "}";
    }

    /** The wall clock records' times are read from (the system's UTC clock unless a test set another). */
    public Clock clock() {
        return clock;
    }

    /** How long the log's end stays where it is before the log is idle and gives back memory (see the builder). */
    public Duration idleAfter() {
        return idleAfter;
    }

    /** Sealed segments whose records are all older than this are removed (null: no limit); see the builder. */
    public Duration retentionTime() {
        return retention.retentionTime();
    }

    /** Oldest sealed segments are removed while the log holds more bytes than this (0: no limit); see the builder. */
    public long retentionBytes() {
        return retention.retentionBytes();
    }

    /**
     * Collects settings; {@link #build()} validates them together. Each config built takes its own copy, so the
     * builder may be changed and built again without changing the configs it built before.
     *
     * <p>Thread-safety: none; one thread at a time.
     */
    public static final class Builder {
        private final Path directory;
        // One immutable record per concept, replaced by each setter: a config built takes them as they are then.
        private SegmentSettings segments = SegmentSettings.DEFAULTS;
        private CommitSettings commit = CommitSettings.DEFAULTS;
        private RecoverySettings recovery = RecoverySettings.DEFAULTS;
        private RetentionSettings retention = RetentionSettings.DEFAULTS;
        private CompressionSettings compression = CompressionSettings.DEFAULTS;
        private IdentitySettings identity = IdentitySettings.DEFAULTS;
        private String name;
        // What code gives as objects (no store keeps them for a log): null for none, but the clock.
        private ArchiveConfig archive;
        private Clock clock = Clock.systemUTC();
        private SyncStrategy syncStrategy;
        // Not kept by a store for a log (not in a record of keptSettings): the store's defaults give it at every open.
        private Duration idleAfter = DEFAULT_IDLE_AFTER;

        private Builder(Path directory) {
            this.directory = Objects.requireNonNull(directory, "directory");
        }

        /** Segment file size: a power of two from 64 KiB to 1 GiB (default 64 MiB). Fixed when the log is created. */
        public Builder segmentSize(long bytes) {
            segments = segments.withSegmentSize(bytes);
            return this;
        }

        /**
         * Largest payload accepted; default 16 MiB, or what the segment size (and the WAL buffers, when set) allow if
         * that is less.
         */
        public Builder maxPayloadSize(int bytes) {
            segments = segments.withMaxPayloadSize(bytes);
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
            segments = segments.withWalBuffers(bytes);
            return this;
        }

        public Builder syncMethod(SyncMethod method) {
            commit = commit.withSyncMethod(method);
            return this;
        }

        /**
         * The wall clock records' times come from (default: the system's UTC clock). For tests and simulations: a
         * clock that steps back never makes times decrease in LSN order (see {@link WalRecord#timestamp()}).
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * How long the log's end must stay where it is before the log is idle (default 5 s): an idle log gives back its
         * WAL buffers' memory (in a store, its share of the store's budget, {@link WalStoreConfig.Builder#walBuffers})
         * and its segments' mappings and descriptors, and takes them again at its next append, which waits a few
         * milliseconds for it. Shorter gives them back sooner, at that cost after each quiet spell. A store does not keep
         * it for a log: set it in the store's defaults.
         */
        public Builder idleAfter(Duration quiet) {
            this.idleAfter = Objects.requireNonNull(quiet, "idleAfter");
            return this;
        }

        /**
         * Time-based retention (Kafka's {@code retention.ms}): whole sealed segments are removed, oldest first, once
         * every record in them is older than {@code age}, unless a replication slot, a consumer cursor or the
         * archiver still needs them (docs/operations.md, "Retention"). Null (the default) keeps everything.
         */
        public Builder retentionTime(Duration age) {
            retention = retention.withRetentionTime(age);
            return this;
        }

        /**
         * Size-based retention (Kafka's {@code retention.bytes}): while the log's segments hold more than
         * {@code bytes}, the oldest sealed segment is removed, with the same holders as {@link #retentionTime}. The
         * segment being written is never removed, so a log may hold up to one segment more. 0 (the default) keeps
         * everything.
         */
        public Builder retentionBytes(long bytes) {
            retention = retention.withRetentionBytes(bytes);
            return this;
        }

        /** Replaces the built-in strategy for {@link #syncMethod(SyncMethod)}: see {@link WalConfig#syncStrategy()}. */
        Builder syncStrategy(SyncStrategy strategy) {
            this.syncStrategy = strategy;
            return this;
        }

        /**
         * The log's default compression (PostgreSQL's {@code wal_compression}): used by every append that does not
         * choose one. A payload is stored compressed only when that saves space (see {@link Compression}); logs
         * holding compressed records need this version or later to be read.
         */
        public Builder compression(Compression codec) {
            compression = compression.withCompression(codec);
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
            compression = compression.withZstdDictionary(enabled);
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
            compression = compression.withZstdLevel(level);
            return this;
        }

        /**
         * The log's name in its meters' {@code log} tag (and its cursors'): default, its directory's name, which is a
         * {@link WalStore} log's name. A server that serves a plain log beside a store's names it so that its meters
         * line up with theirs. Not kept by a store (it names its logs itself).
         */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /**
         * Archives every sealed segment to {@code archive}'s target, and never truncates one before it is archived
         * (docs/operations.md, "Backup and restore"). Default: no archiving. The log does not close the target.
         */
        public Builder archive(ArchiveConfig archive) {
            this.archive = archive;
            return this;
        }

        /**
         * The most log a cursor may hold back from truncation: a cursor lagging further lets truncation pass it and is
         * then lost (its reader fails; logged and counted), so a forgotten consumer never fills the disk. Default 4 GiB.
         */
        public Builder maxCursorRetainedBytes(long bytes) {
            retention = retention.withMaxCursorRetainedBytes(bytes);
            return this;
        }

        /** Level used by {@link Wal#append(byte[])} and the appends that name none; default {@link Durability#ON}. */
        public Builder durability(Durability level) {
            commit = commit.withDurability(level);
            return this;
        }

        /**
         * The longest an {@code OFF} record waits in the WAL buffers before the background writer writes it into its
         * file (default 2 ms; capped at {@link #writerDelay}): from then on it survives the death of the process,
         * though not of the machine until it is forced.
         */
        public Builder offWriteDelay(Duration delay) {
            commit = commit.withOffWriteDelay(delay);
            return this;
        }

        /** Longest time an {@code OFF} record waits for the background writer's force (PostgreSQL's wal_writer_delay). */
        public Builder writerDelay(Duration delay) {
            commit = commit.withWriterDelay(delay);
            return this;
        }

        /** How often the control file records the flushed position (bounds recovery's scan; see docs/durability.md). */
        public Builder checkpointInterval(Duration interval) {
            recovery = recovery.withCheckpointInterval(interval);
            return this;
        }

        /** Truncated segments kept for reuse (renamed, not re-created); default 2. */
        public Builder spareSegments(int count) {
            segments = segments.withSpareSegments(count);
            return this;
        }

        /**
         * Lets recovery cut the log at a bad record even when it lies below the last recorded flush point,
         * discarding everything after it. Off by default: such damage is corruption and open fails.
         */
        public Builder truncateAtCorruption(boolean allow) {
            recovery = recovery.withTruncateAtCorruption(allow);
            return this;
        }

        /** PostgreSQL's commit_delay: a flush leader waits this long to gather more commits. Default 0. */
        public Builder commitDelay(Duration delay) {
            commit = commit.withCommitDelay(delay);
            return this;
        }

        /** PostgreSQL's commit_siblings: commitDelay applies only with at least this many other committers waiting. */
        public Builder commitSiblings(int siblings) {
            commit = commit.withCommitSiblings(siblings);
            return this;
        }

        /**
         * How long a commit at a remote level waits for the synchronous replicas before failing with
         * {@link RemoteCommitTimeoutException} (the record stays durable locally). Default zero: wait as long
         * as it takes, as PostgreSQL does.
         */
        public Builder remoteCommitTimeout(Duration timeout) {
            commit = commit.withRemoteCommitTimeout(timeout);
            return this;
        }

        /**
         * Creates a new log with this identifier instead of a random one (a replica copying a primary, whose
         * segments must be byte-identical); opening an existing log with another id fails. 0: any.
         */
        public Builder logId(long id) {
            identity = identity.withLogId(id);
            return this;
        }

        /**
         * Where a NEW log begins instead of LSN 0: the start of a segment. For a replica whose primary no longer keeps
         * its first segments: the replica's log begins at the segment holding the primary's oldest record, and holds
         * nothing before it (PostgreSQL's base backup). The first record streamed into it may then link to any record
         * before it. Ignored when the directory already holds a log.
         */
        public Builder baseLsn(long lsn) {
            identity = identity.withBaseLsn(lsn);
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
            recovery = recovery.withNewEpochAfterCrash(begin);
            return this;
        }

        public WalConfig build() {
            WalConfigValidation.check(segments, commit, recovery, retention, compression, identity, archive);
            WalConfigValidation.requirePositive(idleAfter, "idleAfter");
            return new WalConfig(this);
        }

        /**
         * The records of plain values set so far, one per concept, but the log's identity: what a store keeps for a
         * log where it differs from the store's defaults ({@link StoreLogSettings}).
         */
        List<Record> keptSettings() {
            return List.of(segments, commit, recovery, retention, compression);
        }

        /** Replaces the record of {@code settings}' concept, one of {@link #keptSettings()}'s (a store restoring a log's own). */
        void keep(Record settings) {
            if (settings instanceof SegmentSettings s) {
                segments = s;
            } else if (settings instanceof CommitSettings c) {
                commit = c;
            } else if (settings instanceof RecoverySettings r) {
                recovery = r;
            } else if (settings instanceof RetentionSettings r) {
                retention = r;
            } else if (settings instanceof CompressionSettings c) {
                compression = c;
            } else {
                throw new IllegalArgumentException("not a kept setting: " + settings);
            }
        }

        /** The sync method set so far (a store decides from it whether a log's flushes go through its journal). */
        SyncMethod syncMethod() {
            return commit.syncMethod();
        }

        /** The replacement force strategy set so far, or null (see {@link #syncMethod()}). */
        SyncStrategy syncStrategy() {
            return syncStrategy;
        }
    }
}
