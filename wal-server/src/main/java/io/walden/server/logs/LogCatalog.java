package io.walden.server.logs;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.walden.core.Cursors;
import io.walden.core.IllegalSettingException;
import io.walden.core.Wal;
import io.walden.core.archive.ArchiveConfig;
import io.walden.core.WalConfig;
import io.walden.core.WalStore;
import io.walden.core.WalStoreConfig;
import io.walden.server.config.LogArchives;
import io.walden.server.config.PerLogSettings;
import io.walden.server.config.ServerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;

import static io.walden.server.config.ServerConfig.DEFAULT_LOG;
import static io.walden.server.config.ServerSettings.AUTO_CREATE_LOGS;
import static io.walden.server.config.ServerSettings.MAX_LOGS;
import static io.walden.server.config.ServerSettings.REPLICATE_FROM;
import static io.walden.server.config.ServerSettings.WAL_BUFFERS_BUDGET;

/**
 * The server's logs by name (docs/operations.md, "Named logs"): the log {@code default}, the plain log at the data
 * directory's root that the server always had, and the named logs of a {@link WalStore} in the same directory
 * ({@code <data-dir>/logs/<name>}, with the store's shared journal). The store is opened when the directory holds one,
 * when walden.yaml declares logs, or at the first creation: a server that never creates a log runs as before.
 *
 * <p>Each log's meters are bound to the server's registry with their {@code log} tag while it is open, and removed when
 * it closes (deleted, or reopened with new settings), so that no gauge keeps a closed log alive. {@link Listener}s (the
 * HTTP API's per-log handlers) follow every change.
 *
 * <p>Thread-safety: {@link #find} and {@link #names} from any thread, without waiting; creations, changes and deletions
 * serialise on the catalog (each does file I/O and forces: never call them on an event loop).
 */
public final class LogCatalog implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LogCatalog.class);

    /**
     * What follows the catalog's changes to open logs (a log opened is found by {@link #find}); called under the
     * catalog's lock, on the changing thread.
     */
    public interface Listener {
        /** {@code old} was closed and {@code reopened} took its place (its settings changed). */
        void replaced(String name, Wal old, Wal reopened);

        void deleted(String name, Wal wal);

        /** Log {@code name} was created (by this server, or as a copy of its primary's); called before it is offered. */
        default void created(String name, Wal wal) {
        }
    }

    private final ServerConfig config;
    private final Wal defaultLog;
    /** The archive's location (archive-to), under which the named logs archive; null without one. */
    private final ArchiveConfig archiveRoot;
    private final MeterRegistry registry;
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();
    /** The largest record of a log created with the server's settings. */
    private final int newLogMaxRecordSize;
    private volatile WalStore store;
    /**
     * Held shared by a named log's cursor change and exclusively by a deletion's check for cursors and the deletion:
     * a cursor created meanwhile would be deleted with the log ({@code log_held} promises otherwise).
     */
    private final ReentrantReadWriteLock deletions = new ReentrantReadWriteLock();
    /** Set by {@link #close}: no store opens after it (a creation queued before the stop). Under the catalog's lock. */
    private boolean closed;
    /**
     * Why this server's users may not create, change or delete logs now (it is a replica: its logs are its primary's), or
     * null. Written by the replication role when it follows or is promoted, read by requests.
     */
    private volatile String following;
    /** Whether the named logs are replicated (a replication endpoint serves them, or this server is a replica). */
    private volatile boolean replicated;
    /** The replication slots holding a log (replica name to the LSN it needs); none when no endpoint serves replicas. */
    private volatile Function<String, Map<String, Long>> slots = name -> Map.of();

    private LogCatalog(ServerConfig config, Wal defaultLog, ArchiveConfig archiveRoot, MeterRegistry registry) {
        this.config = config;
        this.defaultLog = defaultLog;
        this.archiveRoot = archiveRoot;
        this.registry = registry;
        WalConfig.Builder defaults = WalConfig.builder(config.dataDir().resolve("logs"));
        config.namedLogDefaults(defaults);
        this.newLogMaxRecordSize = defaults.build().maxPayloadSize();
    }

    /**
     * The catalog of a server whose log {@code default} is open: opens the store when the data directory holds named
     * logs or walden.yaml declares some, and creates the declared logs that do not exist yet.
     *
     * @param archiveRoot the archive's location (archive-to), under which the named logs archive (null: none): the log
     *                    default's own, except on a cluster's server ({@link LogArchives})
     */
    public static LogCatalog open(ServerConfig config, Wal defaultLog, ArchiveConfig archiveRoot, MeterRegistry registry) {
        LogCatalog c = new LogCatalog(config, defaultLog, archiveRoot, registry);
        defaultLog.meterBinder().bindTo(registry);
        if (!holdsNamedLogs(config.dataDir()) && config.declaredLogs().isEmpty()) {
            return c;
        }
        try {
            c.openStore();
            for (String name : config.declaredLogs().keySet()) {
                if (c.find(name) == null) {
                    c.create(name, Map.of());
                }
            }
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    public void addListener(Listener l) {
        listeners.add(l);
    }

    /** The log named {@code name}, open, or null. */
    public Wal find(String name) {
        if (DEFAULT_LOG.equals(name)) {
            return defaultLog;
        }
        WalStore s = store;
        return s == null ? null : s.log(name).orElse(null);
    }

    /** Every log's name, {@code default} first, then the named logs in order. */
    public List<String> names() {
        List<String> out = new ArrayList<>();
        out.add(DEFAULT_LOG);
        WalStore s = store;
        if (s != null) {
            out.addAll(s.names());
        }
        return out;
    }

    /** The largest record a log created with the server's settings takes (an append that would create one is checked). */
    public int newLogMaxRecordSize() {
        return newLogMaxRecordSize;
    }

    /** Whether an append to an unknown log creates it ({@code --auto-create-logs}). */
    public boolean autoCreates() {
        return config.get(AUTO_CREATE_LOGS);
    }

    /** Whether walden.yaml declares this log's setting, which then only changes there. */
    public boolean declares(String name, PerLogSettings.Entry setting) {
        Map<PerLogSettings.Entry, Object> d = config.declaredLogs().get(name);
        return d != null && d.containsKey(setting);
    }

    /**
     * Creates log {@code name} with the server's settings, {@code settings} overriding them.
     *
     * @throws LogRefusedException      when it exists or there are {@code max-logs} logs
     * @throws IllegalArgumentException when the name is not one a log may have, or a setting is refused
     */
    public synchronized Wal create(String name, Map<PerLogSettings.Entry, Object> settings) {
        if (find(name) != null) {
            throw new LogRefusedException(LogRefusedException.Reason.EXISTS, "log '" + name + "' exists");
        }
        checkName(name);
        int max = config.get(MAX_LOGS);
        if (names().size() >= max) {
            throw new LogRefusedException(LogRefusedException.Reason.TOO_MANY, "this server holds " + names().size()
                    + " logs, the most max-logs allows (" + max + ", the log 'default' included)");
        }
        refuseWhileFollowing();
        Wal wal = inServerTerms(() -> openStore().create(name, PerLogSettings.applier(settings)));
        adopted(name, wal);
        return wal;
    }

    /**
     * Checks {@code settings} as a creation here would, creating nothing: a cluster checks a new log's settings where
     * the request arrives, before another server creates the log with them.
     *
     * @throws IllegalArgumentException when a setting is refused
     */
    public synchronized void checkSettings(Map<PerLogSettings.Entry, Object> settings) {
        inServerTerms(() -> {
            openStore().checkSettings(PerLogSettings.applier(settings));
            return null;
        });
    }

    /** A log just created here or as a replica's copy: its meters bound, its listeners told (replication first). */
    synchronized void adopted(String name, Wal wal) {
        wal.meterBinder().bindTo(registry);
        listeners.forEach(l -> l.created(name, wal));
    }

    /** The primary deleted log {@code name}: this replica's copy goes, with its meters and handlers. */
    synchronized void dropped(String name, Runnable delete) {
        Wal wal = find(name);
        deletions.writeLock().lock(); // as a deletion here: no cursor change runs across it
        try {
            delete.run();
        } finally {
            deletions.writeLock().unlock();
        }
        unbindMeters(name);
        if (wal != null) {
            listeners.forEach(l -> l.deleted(name, wal));
        }
        LOG.info("Deleted log {}: its primary deleted it", name);
    }

    /**
     * Changes log {@code name}'s own settings: it is closed (flushed) and opened again with them
     * ({@link WalStore#reconfigure}); an append racing the change may be refused, unwritten (503).
     *
     * @throws LogRefusedException when there is no such log, it is {@code default}, or walden.yaml declares a setting
     */
    public synchronized Wal change(String name, Map<PerLogSettings.Entry, Object> settings) {
        Wal old = existing(name);
        refuseWhileFollowing();
        if (old == defaultLog) {
            throw new LogRefusedException(LogRefusedException.Reason.SETTINGS_FIXED, "the log 'default' takes the "
                    + "server's settings: change them in walden.yaml or on the command line, and restart");
        }
        for (PerLogSettings.Entry e : settings.keySet()) {
            if (declares(name, e)) {
                throw new LogRefusedException(LogRefusedException.Reason.SETTINGS_FIXED, "walden.yaml declares " + e.key()
                        + " of log '" + name + "' (logs." + name + "): change it there, and restart");
            }
        }
        try {
            return inServerTerms(() -> store.reconfigure(name, PerLogSettings.applier(settings)));
        } finally {
            reopened(name, old);
        }
    }

    /**
     * Log {@code name}, which was {@code old}, may have been reopened (with new settings or, when they failed, the old;
     * here or as a replica's copy taking its primary's): its meters and listeners follow the log open now.
     */
    synchronized void reopened(String name, Wal old) {
        Wal now = find(name);
        if (now != old && now != null && old != null) {
            unbindMeters(name);
            now.meterBinder().bindTo(registry);
            listeners.forEach(l -> l.replaced(name, old, now));
        }
    }

    /**
     * Deletes log {@code name} with its files.
     *
     * @param force delete it even while a consumer cursor or a replication slot still needs it
     * @throws LogRefusedException when there is no such log, it is {@code default}, a cursor or a replica's slot holds
     *                             it, or this server is a replica
     */
    public synchronized void delete(String name, boolean force) {
        deletions.writeLock().lock();
        try {
            deleteHeld(name, force);
        } finally {
            deletions.writeLock().unlock();
        }
    }

    /** Runs a named log's cursor change, which no deletion passes between its check for cursors and its end. */
    public void changingCursors(Runnable change) {
        deletions.readLock().lock();
        try {
            change.run();
        } finally {
            deletions.readLock().unlock();
        }
    }

    private void deleteHeld(String name, boolean force) {
        Wal wal = existing(name);
        if (wal == defaultLog) {
            throw new LogRefusedException(LogRefusedException.Reason.DEFAULT_LOG, "the log 'default' is the server's "
                    + "own (the data directory's root): it cannot be deleted");
        }
        refuseWhileFollowing();
        List<Cursors.Cursor> cursors = wal.cursors().list();
        if (!cursors.isEmpty() && !force) {
            throw new LogRefusedException(LogRefusedException.Reason.HELD, "log '" + name + "' is still needed by "
                    + cursors.size() + " consumer cursor(s) (" + String.join(", ", cursors.stream()
                    .map(Cursors.Cursor::name).toList()) + "): delete them first, or delete the log with ?force=true");
        }
        Set<String> replicas = slots.apply(name).keySet();
        if (!replicas.isEmpty() && !force) {
            throw new LogRefusedException(LogRefusedException.Reason.HELD, "log '" + name + "' is still needed by the "
                    + "replication slot(s) of " + String.join(", ", new TreeSet<>(replicas)) + ": drop them first "
                    + "(DELETE /admin/replication-slots?name=NAME once a replica is gone for good), or delete the log with ?force=true");
        }
        store.delete(name);
        unbindMeters(name);
        listeners.forEach(l -> l.deleted(name, wal));
        LOG.info("Deleted log {}{}", name, cursors.isEmpty() && replicas.isEmpty() ? "" : " (forced past "
                + cursors.size() + " cursor(s) and " + replicas.size() + " replication slot(s))");
    }

    /**
     * Whether this server's users may create, change and delete logs: {@code reason} says why not (it is a replica, whose
     * logs are its primary's), null once they may (a primary, a promoted replica).
     */
    public void following(String reason) {
        following = reason;
    }

    /**
     * {@link #following} with {@code reason}, once the creation, change or deletion under way (if one is) has finished:
     * the names returned are every log's, and none is created or deleted by this server's users until
     * {@code following(null)} (a replica group's member refusing or pausing every log).
     */
    public synchronized List<String> freeze(String reason) {
        following = reason;
        return names();
    }

    /** Whether log {@code name} is copied to replicas or from a primary ({@code default} always is). */
    public boolean replicated(String name) {
        return DEFAULT_LOG.equals(name) || replicated;
    }

    /**
     * The named logs are replicated from now on; {@code holders} gives the replication slots that still need a log, by
     * its name (its deletion is refused while there are some, unless forced).
     */
    public void replicatedWith(Function<String, Map<String, Long>> holders) {
        slots = holders;
        replicated = true;
    }

    /** The store, opened now if it was not (a replica's copies of its primary's logs go there). */
    synchronized WalStore store() {
        return openStore();
    }

    /** The store if it is open, else null. */
    public WalStore openedStore() {
        return store;
    }

    private void refuseWhileFollowing() {
        String reason = following;
        if (reason != null) {
            throw new LogRefusedException(LogRefusedException.Reason.FOLLOWING, reason);
        }
    }

    /** Closes the named logs (the log {@code default} is its server's to close). */
    @Override
    public synchronized void close() {
        closed = true;
        WalStore s = store; // kept: until the server's last request, its logs are found (closed: 503, not 404)
        if (s != null) {
            for (String name : s.names()) {
                unbindMeters(name);
            }
            s.close();
        }
    }

    /** The store's refusal of a log's setting, in the server's names ({@code settings: max-record-size: ...}). */
    private Wal inServerTerms(java.util.function.Supplier<Wal> action) {
        try {
            return action.get();
        } catch (IllegalSettingException e) {
            throw new IllegalArgumentException("settings: " + config.inLogTerms(e), e);
        }
    }

    private Wal existing(String name) {
        Wal wal = find(name);
        if (wal == null) {
            throw new LogRefusedException(LogRefusedException.Reason.NOT_FOUND, "no log '" + name + "'");
        }
        return wal;
    }

    private WalStore openStore() {
        WalStore s = store;
        if (s == null) {
            if (closed) {
                throw new LogRefusedException(LogRefusedException.Reason.STOPPING, "the server is stopping");
            }
            s = WalStore.open(WalStoreConfig.builder(config.dataDir())
                    .walBuffers(config.get(WAL_BUFFERS_BUDGET))
                    .defaults(config::namedLogDefaults)
                    .logSettings((name, b) -> {
                        Map<PerLogSettings.Entry, Object> declared = config.declaredLogs().get(name);
                        if (declared != null) {
                            PerLogSettings.applier(declared).accept(b);
                        }
                        // Under logs/<name>/ of the archive's location, on its client (closed after the store).
                        b.archive(LogArchives.archiveConfig(archiveRoot, name));
                    })
                    .build());
            for (String name : s.names()) {
                s.log(name).orElseThrow().meterBinder().bindTo(registry);
            }
            store = s;
        }
        return s;
    }

    /** Removes the meters of log {@code name} (their {@code log} tag) from the registry. */
    private void unbindMeters(String name) {
        for (Meter m : List.copyOf(registry.getMeters())) {
            if (name.equals(m.getId().getTag("log"))) {
                registry.remove(m);
            }
        }
    }

    private static void checkName(String name) {
        if (!WalStore.NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("'" + name + "' is not a log name: lower-case letters, digits, '.', '_' "
                    + "and '-', up to 128, from a letter or digit");
        }
    }

    /** Whether the data directory holds a store with at least one named log. */
    private static boolean holdsNamedLogs(Path dataDir) {
        try {
            return !namesOnDisk(dataDir).isEmpty();
        } catch (IOException e) {
            return true; // the store's open says what is wrong with it
        }
    }

    /**
     * The names of the named logs in {@code dataDir}'s store, sorted, read from its directory (none when it holds no
     * store): what the store would open, without opening it. A creation or a deletion a crash interrupted
     * ({@code .creating-}, {@code .deleting-}) is no log: the store's open removes it.
     */
    public static List<String> namesOnDisk(Path dataDir) throws IOException {
        Path logs = dataDir.resolve(WalStore.LOGS);
        List<String> names = new ArrayList<>();
        if (!Files.isDirectory(logs)) {
            return names;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(logs)) {
            for (Path p : entries) {
                String name = p.getFileName().toString();
                if (WalStore.NAME.matcher(name).matches() && Files.isDirectory(p)) {
                    names.add(name);
                }
            }
        }
        Collections.sort(names);
        return names;
    }
}
