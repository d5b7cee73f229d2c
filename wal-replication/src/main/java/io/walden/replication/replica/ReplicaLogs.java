package io.walden.replication.replica;

import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.WalStore;
import io.walden.replication.protocol.FrameDescriptor;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * A replica's logs, as a {@link StoreReplicaClient} makes them the primary's set (docs/replication-protocol.md,
 * "Version 6"): the root log, named {@code default}, which is never created or deleted here, and the named logs, created
 * as copies of the primary's and deleted when the primary says so.
 *
 * <p>Thread-safety: creations and deletions are called by one thread of the client at a time (its catalog thread);
 * {@link #changed} by the receiver of the log it changes, meanwhile.
 */
public interface ReplicaLogs {

    /** The root log, {@code default}. */
    Wal root();

    /** The named logs held now. */
    Set<String> names();

    /** The named log {@code name}, open; empty when there is none. */
    Optional<Wal> log(String name);

    /**
     * Creates named log {@code name} as a copy of the primary's (its log id, segment size, base LSN and epoch history:
     * {@link PrimaryIdentity#shape}), with the primary's {@code settings} for it (the user's names and values).
     */
    Wal create(String name, PrimaryIdentity identity, Map<String, String> settings);

    /** Deletes named log {@code name} and its files (the primary deleted it). */
    void delete(String name);

    /**
     * Gives named log {@code name} the primary's {@code settings} for it (changed there, or told again when this replica
     * connects), called by the log's own receiver between two of its frames: returns the log open now, the same
     * one when they change nothing here, else its successor, reopened with them from exactly where the log ended and
     * refusing local appends before anything finds it. By default nothing changes.
     *
     * @throws RuntimeException when they cannot be applied: the log is then open as it was, where it can be ({@link #log})
     */
    default Wal changed(String name, Map<String, String> settings) {
        return log(name).orElse(null);
    }

    /**
     * The root log and the named logs of {@code store}.
     *
     * @param settings applies the primary's settings of a log to its configuration when it is created, and when they
     *                 change ({@link WalStore#replaceSettings}: what they leave alone follows the store's defaults);
     *                 null: ignored
     */
    static ReplicaLogs of(Wal root, WalStore store, BiConsumer<Map<String, String>, WalConfig.Builder> settings) {
        return new ReplicaLogs() {
            @Override
            public Wal root() {
                return root;
            }

            @Override
            public Set<String> names() {
                return store.names();
            }

            @Override
            public Optional<Wal> log(String name) {
                return store.log(name);
            }

            @Override
            public Wal create(String name, PrimaryIdentity identity, Map<String, String> primarySettings) {
                if (name.equals(FrameDescriptor.DEFAULT_LOG)) {
                    throw new IllegalArgumentException("the log default is the root log: it is never created in a store");
                }
                Wal wal = store.create(name, b -> {
                    if (settings != null) {
                        settings.accept(primarySettings, b);
                    }
                    identity.shape(b);
                });
                try {
                    // At once: a log of a replica never takes an append of its own (the client names its primary next).
                    wal.replication().refuseAppends("this log is a replica's, being created as a copy of its primary's");
                    wal.replication().adoptHistory(identity.history());
                    return wal;
                } catch (RuntimeException e) {
                    store.delete(name);
                    throw e;
                }
            }

            @Override
            public void delete(String name) {
                store.delete(name);
            }

            @Override
            public Wal changed(String name, Map<String, String> primarySettings) {
                return store.replaceSettings(name, b -> {
                    if (settings != null) {
                        settings.accept(primarySettings, b);
                    }
                }, wal -> wal.replication().refuseAppends("this log is a replica's, reopened with its primary's settings"));
            }
        };
    }
}
