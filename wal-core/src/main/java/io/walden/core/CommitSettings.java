package io.walden.core;

import java.time.Duration;
import java.util.Objects;

/**
 * How a log's appends become durable: the level an append waits for when it names none, how the files are forced, how
 * long the background writer lets {@code OFF} records wait, how the flush leader gathers commits, and how long a commit
 * at a remote level waits for the replicas (docs/group-commit.md, docs/durability.md). Each value is explained where it
 * is set, on {@link WalConfig.Builder}'s method of the same name; {@link WalConfig#commitSettings()} reads them.
 *
 * <p>A value that may not be null is refused when it is set; {@link #check} refuses the rest when the config is built.
 *
 * <p>Thread-safety: immutable.
 *
 * @param durability          the level of appends that name none ({@link WalConfig.Builder#durability})
 * @param syncMethod          how the files are forced ({@link WalConfig.Builder#syncMethod})
 * @param writerDelay         the longest an {@code OFF} record waits to be forced ({@link WalConfig.Builder#writerDelay})
 * @param offWriteDelay       the longest an {@code OFF} record waits to be written ({@link WalConfig.Builder#offWriteDelay})
 * @param commitDelay         PostgreSQL's commit_delay ({@link WalConfig.Builder#commitDelay})
 * @param commitSiblings      PostgreSQL's commit_siblings ({@link WalConfig.Builder#commitSiblings})
 * @param remoteCommitTimeout how long a remote-level commit waits; zero: for ever ({@link WalConfig.Builder#remoteCommitTimeout})
 */
public record CommitSettings(Durability durability, SyncMethod syncMethod, Duration writerDelay, Duration offWriteDelay,
        Duration commitDelay, int commitSiblings, Duration remoteCommitTimeout) {
    /** The safe defaults: {@code ON}, fdatasync, 200 ms, 2 ms, no commit delay, 5 siblings, no remote timeout. */
    static final CommitSettings DEFAULTS = new CommitSettings(Durability.ON, SyncMethod.FDATASYNC, Duration.ofMillis(200),
            Duration.ofMillis(2), Duration.ZERO, 5, Duration.ZERO);

    public CommitSettings {
        Objects.requireNonNull(durability, "durability");
        Objects.requireNonNull(syncMethod, "syncMethod");
        Objects.requireNonNull(writerDelay, "writerDelay");
        Objects.requireNonNull(offWriteDelay, "offWriteDelay");
        Objects.requireNonNull(commitDelay, "commitDelay");
        Objects.requireNonNull(remoteCommitTimeout, "remoteCommitTimeout");
    }

    CommitSettings withDurability(Durability level) {
        return new CommitSettings(level, syncMethod, writerDelay, offWriteDelay, commitDelay, commitSiblings,
                remoteCommitTimeout);
    }

    CommitSettings withSyncMethod(SyncMethod method) {
        return new CommitSettings(durability, method, writerDelay, offWriteDelay, commitDelay, commitSiblings,
                remoteCommitTimeout);
    }

    CommitSettings withWriterDelay(Duration delay) {
        return new CommitSettings(durability, syncMethod, delay, offWriteDelay, commitDelay, commitSiblings,
                remoteCommitTimeout);
    }

    CommitSettings withOffWriteDelay(Duration delay) {
        return new CommitSettings(durability, syncMethod, writerDelay, delay, commitDelay, commitSiblings,
                remoteCommitTimeout);
    }

    CommitSettings withCommitDelay(Duration delay) {
        return new CommitSettings(durability, syncMethod, writerDelay, offWriteDelay, delay, commitSiblings,
                remoteCommitTimeout);
    }

    CommitSettings withCommitSiblings(int siblings) {
        return new CommitSettings(durability, syncMethod, writerDelay, offWriteDelay, commitDelay, siblings,
                remoteCommitTimeout);
    }

    CommitSettings withRemoteCommitTimeout(Duration timeout) {
        return new CommitSettings(durability, syncMethod, writerDelay, offWriteDelay, commitDelay, commitSiblings,
                timeout);
    }

    /** Refuses, in this order: delays that are not positive, a commit delay out of its bound, negative waits and counts. */
    void check() {
        WalConfigValidation.requirePositive(offWriteDelay, "offWriteDelay");
        WalConfigValidation.requirePositive(writerDelay, "writerDelay");
        // Bounded: the flush leader sleeps this long before a flush that its waiting committers need (docs/group-commit.md).
        if (commitDelay.isNegative() || commitDelay.compareTo(Duration.ofSeconds(1)) > 0) {
            throw new IllegalSettingException("commitDelay", "must be from 0 to 1 s", commitDelay);
        }
        WalConfigValidation.requireNonNegative(remoteCommitTimeout, "remoteCommitTimeout");
        WalConfigValidation.requireNonNegative(commitSiblings, "commitSiblings");
    }
}
