package io.walden.core.internal.sync;

import io.walden.core.WalConfig;

/**
 * A {@link SyncStrategy} that replaces the one a config's {@code syncMethod} names: how a store makes its logs' records
 * durable through its journal, and how tests inject a failing or a held disk. The strategy is not part of the public
 * API (an application picks a {@link io.walden.core.SyncMethod}), so {@link WalConfig} keeps it in package-private
 * members, reached from here (the JDK's SharedSecrets pattern, as {@code AppendCompletions}): {@code WalConfig} installs
 * the access when its class is initialised, which is before any config or builder exists.
 *
 * <p>Thread-safety: installed once, read by any thread (volatile); a builder is not thread-safe itself.
 */
public final class SyncOverride {
    /** WalConfig's package-private members. */
    public interface Access {
        /** The config's replacement strategy, or null. */
        SyncStrategy strategy(WalConfig config);

        /** Sets (null: clears) the builder's replacement strategy. */
        void strategy(WalConfig.Builder builder, SyncStrategy strategy);
    }

    private static volatile Access access;

    private SyncOverride() {
    }

    /** WalConfig's static initialiser, once. */
    public static void install(Access a) {
        access = a;
    }

    /** The strategy a log of {@code config} forces with: its replacement, else the built-in one of its sync method. */
    public static SyncStrategy of(WalConfig config) {
        SyncStrategy custom = access.strategy(config);
        return custom != null ? custom : SyncStrategy.of(config.syncMethod());
    }

    /** Replaces the strategy {@code builder}'s sync method names with {@code strategy} (for instrumentation and fault injection). */
    public static WalConfig.Builder set(WalConfig.Builder builder, SyncStrategy strategy) {
        access.strategy(builder, strategy);
        return builder;
    }
}
