package io.walden.server;

import io.walden.core.Wal;
import io.walden.server.cluster.ClusterLogSettings;
import io.walden.server.cluster.HeldLogs;
import io.walden.server.config.PerLogSettings;
import io.walden.server.http.LogPaths;
import io.walden.server.logs.LogCatalog;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The server's named logs, as the cluster's data work creates, finds and deletes them ({@link HeldLogs}): a log is
 * created (by the first server to lead it) with the settings its creation asked for, read from the cluster
 * ({@link ClusterLogSettings}). The log {@code default} is each server's own, never the cluster's.
 *
 * <p>Thread-safety: as {@link LogCatalog}'s.
 */
final class CatalogHeldLogs implements HeldLogs {
    private final LogCatalog catalog;
    private final ClusterLogSettings creationSettings;

    CatalogHeldLogs(LogCatalog catalog, ClusterLogSettings creationSettings) {
        this.catalog = catalog;
        this.creationSettings = creationSettings;
    }

    @Override
    public Set<String> names() {
        Set<String> names = new TreeSet<>(catalog.names());
        names.remove(LogPaths.DEFAULT_LOG);
        return names;
    }

    @Override
    public Optional<Wal> log(String name) {
        return Optional.ofNullable(catalog.find(name));
    }

    @Override
    public Wal create(String name) {
        Map<String, String> texts;
        try {
            texts = creationSettings.read(name);
        } catch (Exception e) {
            throw new IllegalStateException("log " + name + "'s settings could not be read from the cluster: "
                    + e.getMessage(), e);
        }
        return catalog.create(name, PerLogSettings.read(texts, "log " + name + "'s settings in the cluster", true));
    }

    @Override
    public void delete(String name) {
        catalog.delete(name, true);
    }
}
