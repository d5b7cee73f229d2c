package io.walden.core;

import io.walden.core.internal.commit.WalBuffers;
import io.walden.core.internal.commit.WalBuffersBudget;
import io.walden.core.internal.journal.StoreJournal;
import io.walden.core.internal.record.RecordDescriptor;

import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * What settings each of a {@link WalStore}'s logs opens with: the store's defaults, what the log keeps of its own
 * ({@link StoreLogSettings}), what code gives it at every open ({@link WalStoreConfig.Builder#logSettings}), the
 * journal's force, all within the store's budget of WAL buffers; and the journal's own log's settings.
 *
 * <p>Thread-safety: stateless beyond the store's immutable configuration; from any thread.
 */
final class StoreLogConfigs {
    private final WalStoreConfig config;
    private final WalBuffersBudget budget;

    StoreLogConfigs(WalStoreConfig config, WalBuffersBudget budget) {
        this.config = config;
        this.budget = budget;
    }

    /** Whether the logs' flushes go through the journal: asked for, and the default sync method is a durable one. */
    boolean journalWanted() {
        if (!config.sharedJournal()) {
            return false;
        }
        WalConfig.Builder s = defaultSettings();
        return s.syncStrategy() == null && s.syncMethod() != SyncMethod.NONE;
    }

    /** The store's defaults, on a builder of the store's directory. */
    WalConfig.Builder defaultSettings() {
        WalConfig.Builder b = WalConfig.builder(config.directory());
        config.defaults().accept(b);
        return b;
    }

    /** The journal's own log: the store's sync method, segments of its own size, nothing else of the logs'. */
    WalConfig journalConfig(Path dir) {
        WalConfig.Builder s = defaultSettings();
        WalConfig.Builder b = WalConfig.builder(dir)
                .segmentSize(Wal.segmentSizeOf(dir).orElse(config.journalSegmentSize())); // a journal keeps its size
        if (s.syncStrategy() == null && s.syncMethod() != SyncMethod.NONE) {
            b.syncMethod(s.syncMethod());
        }
        config.journalSettings().accept(b);
        return b.build();
    }

    /**
     * The settings of log {@code name} in {@code dir}: the defaults, what it was created with (kept in its file, and at
     * its creation {@code created} itself), then code's; and the segment size its control file holds, which no default
     * changed later can change.
     */
    WalConfig.Builder configOf(String name, Path dir, Consumer<WalConfig.Builder> created) {
        WalConfig.Builder b = WalConfig.builder(dir);
        config.defaults().accept(b);
        StoreLogSettings.apply(dir, b);
        created.accept(b);
        config.logSettings().accept(name, b);
        Wal.segmentSizeOf(dir).ifPresent(b::segmentSize);
        return b;
    }

    /**
     * {@link #configOf} for the log's life in the store: its flushes go through {@code journal} (null: none) under
     * {@code key}, unless the log's own settings ask for no force or for a force of their own (a custom strategy).
     */
    WalConfig journaled(String name, Path dir, Consumer<WalConfig.Builder> created, StoreJournal journal, Long key) {
        WalConfig.Builder b = configOf(name, dir, created);
        if (journal != null && b.syncStrategy() == null && b.syncMethod() != SyncMethod.NONE) {
            b.syncStrategy(journal.logJournal(key, dir));
        }
        return withinBudget(b.build());
    }

    /** Refuses a log whose WAL buffers alone would not fit in the store's budget: it could never append. */
    WalConfig withinBudget(WalConfig c) {
        long ring = WalBuffers.bytesFor(c.walBuffers(), c.segmentSize(),
                RecordDescriptor.aligned(RecordDescriptor.recordLength(c.maxPayloadSize())));
        if (ring > budget.total()) {
            throw new IllegalSettingException("walBuffers", "a log's WAL buffers (" + ring + " bytes with the room for "
                    + "its largest record) must fit in the store's budget of " + budget.total() + " bytes (the store's "
                    + "walBuffers): give the log smaller walBuffers or maxPayloadSize, or the store a larger budget",
                    c.walBuffers());
        }
        return c;
    }
}
