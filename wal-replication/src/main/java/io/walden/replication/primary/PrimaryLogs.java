package io.walden.replication.primary;

import io.walden.core.Wal;
import io.walden.core.WalStore;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.protocol.FrameDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The logs a primary serves (docs/replication-protocol.md, "Version 6"): the root log, named {@code default}, and every
 * log of its {@link WalStore} if it has one, each with its {@link LogEndpoint}; and the version 6 connections that follow
 * the set ({@link Listener}), told of each log created, deleted or changed. The store has no listeners of its own: the
 * server calls {@link #refresh()} after it creates or deletes a log (and {@link #changed} after a log's settings change).
 *
 * <p>Thread-safety: every method from any thread; changes to the set and subscriptions serialise on this object, so a
 * connection's first listing and the changes it is told of afterwards neither miss nor repeat a change.
 */
final class PrimaryLogs {
    private static final Logger LOG = LoggerFactory.getLogger(PrimaryLogs.class);

    /** A version 6 connection following the set. Called under this object's lock: hand the work to the connection's loop. */
    interface Listener {
        void added(LogEndpoint log);

        void removed(LogEndpoint log);

        void changed(LogEndpoint log);

        /**
         * The log of {@code old} was closed and opened again (its settings changed): {@code reopened} serves it from now
         * on, the same log (its id, its records), so the replica keeps its copy and resumes from its own end.
         */
        void reopened(LogEndpoint old, LogEndpoint reopened);
    }

    /** The store, or null while it is not open (or there is none). */
    private final Supplier<WalStore> store;
    private final long maxSlotRetainedBytes;
    private final Function<String, Map<String, String>> settings;
    private final LogEndpoint root;
    /** By name, {@code default} included; replaced whole under the lock, read anywhere. */
    private volatile Map<String, LogEndpoint> logs;
    private final Set<Listener> listeners = new CopyOnWriteArraySet<>();
    private SyncPolicy policy;
    /**
     * Logs with a policy of their own instead of the server's, by name (empty: none, the log's commits act as LOCAL):
     * a cluster's primary waits for each log's in-sync replicas (docs/cluster.md). Kept until {@link #inheritPolicy}.
     */
    private final Map<String, Optional<SyncPolicy>> own = new HashMap<>();

    /**
     * @param store    the named logs, or null (for now, or for a primary of one log)
     * @param settings a log's settings as the catalog tells them (the user's names), by log name
     */
    PrimaryLogs(Wal root, Supplier<WalStore> store, long maxSlotRetainedBytes, Function<String, Map<String, String>> settings) {
        this.store = store;
        this.maxSlotRetainedBytes = maxSlotRetainedBytes;
        this.settings = settings;
        this.root = new LogEndpoint(FrameDescriptor.DEFAULT_LOG, root, maxSlotRetainedBytes, null);
        Map<String, LogEndpoint> initial = new TreeMap<>();
        initial.put(FrameDescriptor.DEFAULT_LOG, this.root);
        this.logs = initial;
        refresh();
    }

    LogEndpoint root() {
        return root;
    }

    /** The log named {@code name}, or null. */
    LogEndpoint get(String name) {
        return logs.get(name);
    }

    /** Whether the primary has logs besides {@code default}. */
    boolean hasNamedLogs() {
        return logs.size() > 1;
    }

    /** Every log, {@code default} first, then by name. */
    List<LogEndpoint> all() {
        List<LogEndpoint> out = new ArrayList<>();
        out.add(root);
        logs.forEach((name, log) -> {
            if (log != root) {
                out.add(log);
            }
        });
        return out;
    }

    /** The settings the catalog tells of {@code log}. */
    Map<String, String> settingsOf(LogEndpoint log) {
        Map<String, String> s = settings.apply(log.name);
        return s == null ? Map.of() : s;
    }

    /** Follows the set from now on: returns it ({@code default} first), then tells {@code listener} of every change. */
    synchronized List<LogEndpoint> subscribe(Listener listener) {
        listeners.add(listener);
        return all();
    }

    synchronized void unsubscribe(Listener listener) {
        listeners.remove(listener);
    }

    /**
     * Takes the store's logs as they are now: a log created since is served (its slots read, its policy set) and
     * announced; one deleted is dropped (its streams end); one deleted and created again under its name is both; one
     * reopened (its settings changed: the same log id) is served anew with its slots, and its replicas are told its
     * settings and resume where they are.
     */
    synchronized void refresh() {
        WalStore store = this.store.get();
        if (store == null) {
            return;
        }
        Map<String, LogEndpoint> next = new TreeMap<>();
        next.put(FrameDescriptor.DEFAULT_LOG, root);
        List<LogEndpoint> added = new ArrayList<>();
        List<LogEndpoint> removed = new ArrayList<>();
        Map<LogEndpoint, LogEndpoint> reopened = new LinkedHashMap<>();
        for (String name : store.names()) {
            Wal wal = store.log(name).orElse(null);
            if (wal == null || wal.isClosed()) {
                continue;
            }
            LogEndpoint known = logs.get(name);
            if (known != null && known.wal == wal) {
                next.put(name, known);
                continue;
            }
            if (known != null && known.logId == wal.status().logId()) {
                LogEndpoint log = known.reopenedAs(wal, maxSlotRetainedBytes, policyOf(name));
                next.put(name, log);
                reopened.put(known, log);
                continue;
            }
            if (known != null) {
                removed.add(known);
            }
            LogEndpoint log = new LogEndpoint(name, wal, maxSlotRetainedBytes, policyOf(name));
            next.put(name, log);
            added.add(log);
        }
        logs.forEach((name, log) -> {
            if (log != root && !next.containsKey(name)) {
                removed.add(log);
            }
        });
        logs = Collections.unmodifiableMap(next);
        for (LogEndpoint log : removed) {
            LOG.info("Log {} is no longer replicated (deleted)", log.name);
            listeners.forEach(l -> l.removed(log));
            if (log.wal.isClosed()) {
                log.deleted();
            } else {
                log.close();
            }
        }
        for (LogEndpoint log : added) {
            listeners.forEach(l -> l.added(log));
        }
        reopened.forEach((old, log) -> {
            LOG.info("Log {} was reopened with new settings: its replicas are told them and resume where they are", log.name);
            listeners.forEach(l -> l.reopened(old, log));
        });
    }

    /** Log {@code name}'s settings changed: every connection tells its replica. */
    synchronized void changed(String name) {
        LogEndpoint log = logs.get(name);
        if (log != null) {
            listeners.forEach(l -> l.changed(log));
        }
    }

    synchronized SyncPolicy policy() {
        return policy;
    }

    /** The server-wide policy, on every log now and on every log created later, but those with a policy of their own. */
    synchronized void policy(SyncPolicy newPolicy) {
        policy = newPolicy;
        logs.values().forEach(log -> {
            if (!own.containsKey(log.name)) {
                log.policy(newPolicy);
            }
        });
    }

    /** The policy log {@code name} is served with: its own, or the server's. */
    synchronized SyncPolicy policyOf(String name) {
        Optional<SyncPolicy> p = own.get(name);
        return p != null ? p.orElse(null) : policy;
    }

    /** Log {@code name}'s own policy (null: none), instead of the server's, now and whenever it is served again. */
    synchronized void policy(String name, SyncPolicy newPolicy) {
        own.put(name, Optional.ofNullable(newPolicy));
        LogEndpoint log = logs.get(name);
        if (log != null) {
            log.policy(newPolicy);
        }
    }

    /** Log {@code name} takes the server's policy again. */
    synchronized void inheritPolicy(String name) {
        own.remove(name);
        LogEndpoint log = logs.get(name);
        if (log != null) {
            log.policy(policy);
        }
    }

    /** The endpoint stops: every log's slots saved and waiting commits failed as unconfirmed. */
    synchronized void close() {
        listeners.clear();
        logs.values().forEach(LogEndpoint::close);
    }

    /** The endpoint never started. */
    synchronized void abandon() {
        logs.values().forEach(log -> {
            log.slots.abandon();
            log.releaser.close();
            log.wal.replication().retentionFloor(null);
        });
    }
}
