package io.walden.server.logs;

import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.core.WalStore;
import io.walden.replication.replica.PrimaryIdentity;
import io.walden.replication.replica.ReplicaLogs;
import io.walden.server.config.PerLogSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A replica's logs as its {@link LogCatalog} holds them: the log {@code default}, and the copies of its primary's named
 * logs, created, changed and deleted when the primary's catalog says so (docs/replication-protocol.md, "Version 6"). Each copy
 * goes through the catalog, so that its meters and the HTTP API's handlers follow it as they follow a log created here.
 * The store opens at the first copy: a replica of a primary without named logs runs as before.
 *
 * <p>Thread-safety: called by the replica client's catalog thread (creations, deletions) and a log's receiver thread
 * (its changes); each serialises on the catalog and the store.
 */
public final class ReplicaCopies implements ReplicaLogs {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaCopies.class);

    private final LogCatalog catalog;
    private final Wal root;

    public ReplicaCopies(LogCatalog catalog, Wal root) {
        this.catalog = catalog;
        this.root = root;
    }

    @Override
    public Wal root() {
        return root;
    }

    @Override
    public Set<String> names() {
        WalStore s = catalog.openedStore();
        return s == null ? Set.of() : s.names();
    }

    @Override
    public Optional<Wal> log(String name) {
        WalStore s = catalog.openedStore();
        return s == null ? Optional.empty() : s.log(name);
    }

    @Override
    public Wal create(String name, PrimaryIdentity identity, Map<String, String> settings) {
        Wal wal = ReplicaLogs.of(root, catalog.store(), (told, b) -> applier(told).accept(b))
                .create(name, identity, settings);
        catalog.adopted(name, wal);
        return wal;
    }

    /**
     * The primary's settings of a log, changed there or told again at a connection: the copy takes them as it would at
     * its creation (what the primary leaves without a value takes this server's default), reopened only when that
     * changes something, from exactly where it ended; its meters and handlers follow the reopened log.
     */
    @Override
    public Wal changed(String name, Map<String, String> settings) {
        Wal old = log(name).orElse(null);
        Consumer<WalConfig.Builder> applier = applier(settings); // read once: an unknown setting is logged once
        try {
            return ReplicaLogs.of(root, catalog.store(), (told, b) -> applier.accept(b)).changed(name, settings);
        } finally {
            catalog.reopened(name, old);
        }
    }

    @Override
    public void delete(String name) {
        catalog.dropped(name, () -> catalog.store().delete(name));
    }

    /**
     * The primary's settings of a log, on its copy: each one this server knows and can read (a newer primary may have
     * settings this one lacks: they are left at this server's defaults, logged); the segment size is the primary's
     * log's own whatever they say (the copy's identity sets it).
     */
    static Consumer<WalConfig.Builder> applier(Map<String, String> primary) {
        Map<PerLogSettings.Entry, Object> values = new LinkedHashMap<>();
        primary.forEach((key, text) -> {
            if (text == null) {
                return; // never told (see told): the replica's default
            }
            try {
                values.putAll(PerLogSettings.read(Map.of(key, text), "the primary's settings", true));
            } catch (IllegalArgumentException e) {
                LOG.warn("A setting of the primary's log is left at this server's default: {}", e.getMessage());
            }
        });
        return PerLogSettings.applier(values);
    }

    /**
     * A log's settings as its replicas are told them: every per-log setting in force that has a value (one without, as
     * a retention without limit, is left to the replica's own default).
     */
    public static Map<String, String> told(Wal wal) {
        Map<String, String> out = new LinkedHashMap<>();
        PerLogSettings.describe(wal.config()).forEach((key, value) -> {
            if (value != null) {
                out.put(key, value);
            }
        });
        return out;
    }
}
