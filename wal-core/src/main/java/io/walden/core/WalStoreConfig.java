package io.walden.core;

import io.walden.core.internal.commit.WalBuffers;
import io.walden.core.internal.segment.OpenSegments;

import java.nio.file.Path;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Everything {@link WalStore#open(WalStoreConfig)} needs: the store's directory, the settings every log starts from,
 * the settings of each log that only code can give (an archive, a clock), and the store's threads. Built with
 * {@link #builder(Path)}.
 *
 * <p>Thread-safety: immutable once built; every method from any thread. The {@link Builder} is not thread-safe.
 */
public final class WalStoreConfig {
    /** The default budget of the logs' WAL buffers: 32 logs appending at once with the default rings. */
    public static final long DEFAULT_WAL_BUFFERS = 1L << 30;
    private final Path directory;
    private final Consumer<WalConfig.Builder> defaults;
    private final BiConsumer<String, WalConfig.Builder> logSettings;
    private final int writerThreads;
    private final boolean sharedJournal;
    private final int maxOpenFiles;
    private final long journalSegmentSize;
    /** Tests only: settings applied last to the journal's own log; none normally. */
    private final Consumer<WalConfig.Builder> journalSettings;
    private final long walBuffers;

    private WalStoreConfig(Builder b) {
        this.directory = b.directory;
        this.defaults = b.defaults;
        this.logSettings = b.logSettings;
        this.writerThreads = b.writerThreads;
        this.sharedJournal = b.sharedJournal;
        this.maxOpenFiles = b.maxOpenFiles;
        this.journalSegmentSize = b.journalSegmentSize;
        this.journalSettings = b.journalSettings;
        this.walBuffers = b.walBuffers;
    }

    public static Builder builder(Path directory) {
        return new Builder(directory);
    }

    /** The store's directory: each log lives in {@code logs/<name>} under it. */
    public Path directory() {
        return directory;
    }

    /** The settings every log of the store starts from (see {@link Builder#defaults}). */
    public Consumer<WalConfig.Builder> defaults() {
        return defaults;
    }

    /** The settings of one log given by code at every open (see {@link Builder#logSettings}). */
    public BiConsumer<String, WalConfig.Builder> logSettings() {
        return logSettings;
    }

    /** Threads that write and force the logs' records in the background (see {@link Builder#writerThreads}). */
    public int writerThreads() {
        return writerThreads;
    }

    /** Whether the logs' durable bytes go through the store's journal (see {@link Builder#sharedJournal}). */
    public boolean sharedJournal() {
        return sharedJournal;
    }

    /** How many segment files the store keeps open at most (see {@link Builder#maxOpenFiles}). */
    public int maxOpenFiles() {
        return maxOpenFiles;
    }

    /** The logs' WAL buffers together, in bytes (see {@link Builder#walBuffers}). */
    public long walBuffers() {
        return walBuffers;
    }

    /** Tests only: settings applied last to the journal's own log. */
    Consumer<WalConfig.Builder> journalSettings() {
        return journalSettings;
    }

    /** The journal's segment size: a checkpoint is due once it holds two segments. */
    long journalSegmentSize() {
        return journalSegmentSize;
    }

    /** Collects a store's settings. Thread-safety: none; one thread at a time. */
    public static final class Builder {
        private final Path directory;
        private Consumer<WalConfig.Builder> defaults = b -> { };
        private BiConsumer<String, WalConfig.Builder> logSettings = (name, b) -> { };
        private int writerThreads = Runtime.getRuntime().availableProcessors();
        private boolean sharedJournal = true;
        private int maxOpenFiles = OpenSegments.DEFAULT_MAX_OPEN_FILES;
        private long journalSegmentSize = 16L << 20;
        private Consumer<WalConfig.Builder> journalSettings = b -> { };
        private long walBuffers = DEFAULT_WAL_BUFFERS;

        private Builder(Path directory) {
            this.directory = Objects.requireNonNull(directory, "directory");
        }

        /**
         * The settings every log starts from, at its creation and at every open (default: {@link WalConfig}'s own). A
         * log keeps the settings it was created with where they differ from these; a default changed here later reaches
         * every log that left it at the default.
         */
        public Builder defaults(Consumer<WalConfig.Builder> defaults) {
            this.defaults = Objects.requireNonNull(defaults, "defaults");
            return this;
        }

        /**
         * Settings applied to log {@code name} after the defaults and the settings it was created with, at every open:
         * for what a store cannot keep in a file, such as an archive ({@link WalConfig.Builder#archive}, each log under
         * its own prefix) or a clock.
         */
        public Builder logSettings(BiConsumer<String, WalConfig.Builder> logSettings) {
            this.logSettings = Objects.requireNonNull(logSettings, "logSettings");
            return this;
        }

        /**
         * How many threads write and force the logs' records in the background (the OFF records within writer-delay,
         * and asynchronous commits): as many logs flush at once. Default: the available processors.
         */
        public Builder writerThreads(int threads) {
            if (threads < 1) {
                throw new IllegalArgumentException("writerThreads must be at least 1, got " + threads);
            }
            this.writerThreads = threads;
            return this;
        }

        /**
         * Whether commits to different logs share their flushes through one journal (default: yes). With it, a log's
         * flush writes its records into its file as always and then into the store's journal, whose one
         * {@code fdatasync} makes the commits of every log that flushed meanwhile durable; the journal's checkpoint
         * forces the logs' files about once a second. Without it, each log forces its own file, so N logs with one
         * committer each make N forces where one log with N committers makes one (docs/group-commit.md, "Flushes
         * across logs", has both measured). Every promise of docs/durability.md holds per log either way; with the
         * journal, a failed write or force of the journal fails the flush of every log waiting on it (one disk, one
         * fate). A log whose settings ask for no force ({@link SyncMethod#NONE}) or for a strategy of its own keeps
         * it. A store's logs are opened through the store whether or not it has a journal ({@link Wal#open} refuses
         * a directory with a store key).
         */
        public Builder sharedJournal(boolean shared) {
            this.sharedJournal = shared;
            return this;
        }

        /**
         * How many segment files the store keeps open at once, each a mapping and two descriptors (default 512, about
         * 1,024 descriptors). Beyond it, sealed segments (wholly below their log's flushed position) that were read least
         * recently give back their mapping and descriptors, and are mapped again at their next read; an idle log gives
         * back its sealed segments whatever the cap. The segments logs write into, and the one each prepares next, stay
         * open: a store whose appending logs need more than the cap holds more (a store of N busy logs holds about 2N).
         */
        public Builder maxOpenFiles(int files) {
            if (files < 1) {
                throw new IllegalArgumentException("maxOpenFiles must be at least 1, got " + files);
            }
            this.maxOpenFiles = files;
            return this;
        }

        /**
         * The WAL buffers of all the store's logs together, in bytes (default 1 GiB): a hard cap on the memory their
         * rings take. A log holds its ring ({@link WalConfig.Builder#walBuffers}, 32 MiB by default) only while it
         * appends: it opens without it, gives it back once idle (5 s: {@link WalConfig.Builder#idleAfter}), and gives
         * it back at once when another log needs the room and it is quiet (every record in its files, no append in
         * progress). When more logs append at once than the budget holds, their appends take turns, waiting for a quiet
         * one (and say so in the log file after a second): give such logs smaller rings (a few MiB serve a log of small
         * records well; a ring must hold its largest record twice) or the store a larger budget. The store refuses a
         * log whose ring alone exceeds it.
         */
        public Builder walBuffers(long bytes) {
            if (bytes < WalBuffers.MIN_CAPACITY) {
                throw new IllegalSettingException("walBuffers", "the store's budget must be at least "
                        + WalBuffers.MIN_CAPACITY + " bytes", bytes);
            }
            this.walBuffers = bytes;
            return this;
        }

        /** Tests only: smaller journal segments, so that checkpoints remove some within a test's writes. */
        Builder journalSegmentSize(long bytes) {
            this.journalSegmentSize = bytes;
            return this;
        }

        /**
         * Tests only: settings applied last to the journal's own log (a force that fails on demand, a background writer
         * that stays asleep).
         */
        Builder journalSettings(Consumer<WalConfig.Builder> settings) {
            this.journalSettings = settings;
            return this;
        }

        public WalStoreConfig build() {
            return new WalStoreConfig(this);
        }
    }
}
