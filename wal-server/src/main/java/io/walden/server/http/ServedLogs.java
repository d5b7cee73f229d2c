package io.walden.server.http;

import io.walden.core.PayloadTooLargeException;
import io.walden.core.Wal;
import io.walden.server.logs.LogCatalog;
import io.walden.server.logs.LogRefusedException;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * The per-log routes' way to their log ({@code /v1/logs/{log}/...}): each open log's data and cursor APIs, made the first
 * time the log is asked for and dropped when it is deleted or reopened ({@link LogCatalog.Listener}). The log
 * {@code default} is served by the same APIs as {@code /v1/records} and {@code /v1/cursors}.
 *
 * <p>A log that is being reopened (its settings changed) is still found, closed: its requests are answered as a closed
 * log's (503), never 404. An append to a log that does not exist creates it when {@code --auto-create-logs} is on:
 * on the admin thread (a creation forces files), then the append runs on the event loop as any other.
 *
 * <p>Thread-safety: lookups from any event loop, without locks; the catalog's listener calls come from the thread that
 * changed it. Two loops that make a log's APIs at once each use their own, and one is kept: both serve the same log.
 */
public final class ServedLogs implements LogCatalog.Listener {
    /** One open log and its APIs. */
    record ServedLog(Wal wal, DataApi data, CursorApi cursors) {
    }

    private final LogCatalog catalog;
    private final DataApi defaultData;
    private final CursorApi defaultCursors;
    private final ExecutorService cursorWorkers;
    /** Creations by an append ({@code --auto-create-logs}), on the admin thread as {@code POST /v1/logs}'s. */
    private final SegmentWaits creations;
    private final Map<String, ServedLog> served = new ConcurrentHashMap<>();
    /** Where a log led by another server of a cluster is (docs/cluster.md); by default, nowhere else. */
    private volatile PrimaryLocator locator = log -> null;

    /** Where a log's primary is when it is not this server (a cluster's), so that its requests go there. */
    @FunctionalInterface
    public interface PrimaryLocator {
        /**
         * The base URL ({@code http://HOST:PORT}) of the server that leads named log {@code log}, when that is another
         * server; null when this server leads it, or holds it alone, or no server leads it now.
         */
        String primaryElsewhere(String log);

        /** Whether named log {@code log} is one of a cluster's, wherever it is and whether or not a server leads it now. */
        default boolean inCluster(String log) {
            return false;
        }
    }

    /**
     * @param admin where an append creates its log: the admin thread, where creations, changes and deletions of logs
     *              run one at a time (never the segment-wait thread every log's appends rely on)
     */
    public ServedLogs(LogCatalog catalog, DataApi defaultData, CursorApi defaultCursors, ExecutorService cursorWorkers,
                      Executor admin) {
        this.catalog = catalog;
        this.defaultData = defaultData;
        this.defaultCursors = defaultCursors;
        this.cursorWorkers = cursorWorkers;
        this.creations = new SegmentWaits(admin);
        catalog.addListener(this);
    }

    /** From now on, requests for a log whose primary is another server are redirected there (307). */
    public void locateWith(PrimaryLocator locator) {
        this.locator = locator;
    }

    /**
     * Whether the request names a log led elsewhere, then answered with a redirect to the same request there. The log
     * {@code default} is each server's own, never redirected.
     */
    private boolean redirected(String name, Exchange ex) {
        if (LogPaths.DEFAULT_LOG.equals(name)) {
            return false;
        }
        String primary = locator.primaryElsewhere(name);
        if (primary == null) {
            return false;
        }
        ex.redirectToPrimary(name, primary);
        return true;
    }

    /** Log {@code name}'s APIs, or null when there is no such log. */
    ServedLog get(String name) {
        ServedLog s = served.get(name);
        if (s != null && !s.wal().isClosed()) {
            return s;
        }
        Wal wal = catalog.find(name);
        if (wal == null) {
            if (s != null) {
                served.remove(name, s);
            }
            return null;
        }
        if (s != null && s.wal() == wal) {
            return s; // closed while it reopens: answered as closed (503)
        }
        ServedLog fresh = wal == defaultData.wal() ? new ServedLog(wal, defaultData, defaultCursors)
                : new ServedLog(wal, defaultData.forLog(wal), new CursorApi(wal, cursorWorkers, work -> () -> catalog.changingCursors(work)));
        ServedLog before = served.put(name, fresh);
        if (before != null && before != fresh && before.data() != defaultData && before.wal() != wal) {
            before.data().stop(); // a log reopened or deleted meanwhile: its streams end
        }
        return fresh;
    }

    /** A handler of a per-log route: finds the log the path names (404 {@code log_not_found} when none). */
    Consumer<Exchange> handler(BiConsumer<ServedLog, Exchange> action) {
        return ex -> {
            String name = Route.log(ex);
            if (redirected(name, ex)) {
                return;
            }
            ServedLog log = get(name);
            if (log == null) {
                throw notHere(name, "no log '" + name + "'");
            }
            action.accept(log, ex);
        };
    }

    /**
     * The refusal of a request for log {@code name}, which this server neither holds nor knows a primary of: a cluster's
     * log between two primaries (a failover, a hand-over, its creation) is there, so 503 {@code no_primary} (retry in a
     * moment), never 404, which would tell a client the log does not exist; any other, 404 with {@code detail}.
     */
    private LogRefusedException notHere(String name, String detail) {
        if (locator.inCluster(name)) {
            return new LogRefusedException(LogRefusedException.Reason.NO_PRIMARY, "log '" + name + "' has no primary "
                    + "at the moment (a failover or a move in flight, see GET /admin/cluster): retry in a moment");
        }
        return new LogRefusedException(LogRefusedException.Reason.NOT_FOUND, detail);
    }

    /**
     * A handler of a per-log append: as {@link #handler}, but a log that does not exist is created first when
     * {@code --auto-create-logs} is on, once the append's parameters (and a single record's size, against a new log's
     * largest) are known good: a refused append creates nothing.
     *
     * @param batch whether the route appends a batch (whose records are checked as the batch is read)
     */
    Consumer<Exchange> appendHandler(boolean batch, BiConsumer<ServedLog, Exchange> append) {
        return ex -> {
            String name = Route.log(ex);
            if (redirected(name, ex)) {
                return;
            }
            ServedLog log = get(name);
            if (log != null) {
                append.accept(log, ex);
                return;
            }
            if (!catalog.autoCreates() || locator.inCluster(name)) {
                throw notHere(name, "no log '" + name
                        + "' (create it with POST /v1/logs, or start the server with --auto-create-logs)");
            }
            RecordParams.checkAppend(ex);
            int length = ex.request().content().readableBytes();
            if (!batch && length > catalog.newLogMaxRecordSize()) {
                throw new PayloadTooLargeException(length, catalog.newLogMaxRecordSize());
            }
            creations.submit(ex, () -> {
                if (catalog.find(name) == null) {
                    try {
                        catalog.create(name, Map.of());
                    } catch (LogRefusedException e) {
                        if (e.reason() != LogRefusedException.Reason.EXISTS) { // else another request created it
                            throw e;
                        }
                    }
                }
                ex.ctx().executor().execute(() -> {
                    try {
                        ServedLog created = get(name);
                        if (created == null) {
                            throw new LogRefusedException(LogRefusedException.Reason.NOT_FOUND, "no log '" + name
                                    + "': it was deleted as it was created");
                        }
                        append.accept(created, ex);
                    } catch (RuntimeException e) {
                        ApiErrors.answer(ex, e);
                    }
                });
            });
        };
    }

    /** Ends every log's streams, the log {@code default}'s included (the server stops). */
    public void stop() {
        defaultData.stop();
        served.values().forEach(s -> s.data().stop());
    }

    @Override
    public void replaced(String name, Wal old, Wal reopened) {
        drop(name, old);
    }

    @Override
    public void deleted(String name, Wal wal) {
        drop(name, wal);
    }

    /** Drops the APIs of {@code gone}, and only those: a loop may already serve its successor's. */
    private void drop(String name, Wal gone) {
        ServedLog s = served.get(name);
        if (s != null && s.wal() == gone && served.remove(name, s) && s.data() != defaultData) {
            s.data().stop(); // its streams end at their next poll
        }
    }
}
