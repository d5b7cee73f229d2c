package io.walden.server.http;

import io.walden.server.logs.LogRefusedException;

import java.util.Map;
import java.util.SortedSet;
import java.util.concurrent.Executor;

/**
 * Where a cluster's logs are (docs/cluster.md), for the HTTP API: a request for a log led by another server is
 * redirected there; {@code POST /v1/logs} and {@code DELETE /v1/logs/{log}} add and remove the log in the whole
 * cluster; {@code GET /v1/logs/{log}} says where its primary and replicas are; {@code GET /admin/cluster} shows it all.
 *
 * <p>Thread-safety: any thread; {@link #primaryElsewhere} and {@link #where} answer from memory, never waiting.
 */
public interface ClusterCatalog extends ServedLogs.PrimaryLocator {
    /** The cluster's logs, held here or not, sorted by name (from memory). */
    SortedSet<String> logNames();

    /** Whether {@code log} is one of the cluster's logs (placed by it), held here or not. */
    boolean isClusterLog(String log);

    /**
     * Adds {@code log} to the cluster with {@code replicas} copies (its primary included) and its own {@code settings}
     * (per-log settings by name, as texts: the server that first leads it creates it with them, and its replicas take
     * them from it), and returns once a server leads it: {@link #where} it is.
     */
    Map<String, Object> create(String log, int replicas, Map<String, String> settings) throws Exception;

    /**
     * Changes how many copies of {@code log} the cluster keeps (its primary included): Helix places a new copy, which
     * catches up, before it takes one away.
     */
    void setReplicas(String log, int replicas) throws Exception;

    /** Removes {@code log} from the cluster: every server drops its copy. False when there was no such log. */
    boolean delete(String log) throws Exception;

    /**
     * Where {@code POST /v1/logs} runs {@link #create} and {@link #describeAtPrimary}: never the admin thread. A creation
     * waits for Helix to place the log (seconds), then asks the log's primary, another server, to describe it, which that
     * server does on its admin thread: two servers creating logs led by each other on their admin threads would each
     * wait for the other's until the request timed out, and every other admin request of both would wait behind them.
     */
    Executor creations();

    /**
     * Log {@code log}'s description (as {@code GET /v1/logs/{log}} answers it) from its primary, another server, asked
     * over HTTP with the request's {@code authorization} (null: none).
     */
    Map<String, Object> describeAtPrimary(String log, String authorization) throws Exception;

    /** {@code {"primary": NAME, "replicas": [NAME, ...]}}: the servers' names ({@code --name}). */
    Map<String, Object> where(String log);

    /**
     * Starts ({@code true}) or ends this server's drain: every log it holds moves to other servers, and none is placed
     * here while it lasts. Answers {@code {"server": NAME, "draining": bool, "logs": COPIES_HELD, "done": bool}}.
     *
     * @throws LogRefusedException ({@code no_other_server}) when a drain would find no live server to move logs to
     */
    Map<String, Object> drain(boolean on) throws Exception;

    /** This server's drain, as {@link #drain} answers it, without changing it. */
    Map<String, Object> drainStatus() throws Exception;

    /**
     * The cluster at a glance, from this server's memory (refreshed every quarter second; never waits on ZooKeeper), for
     * the status: {@code {"cluster", "server", "servers": [...], "logs": {LOG: {"primary", "replicas", "moves"}}}}.
     */
    Map<String, Object> overview();

    /**
     * The cluster as this server sees it: its servers, and each log's placement, leadership record (epoch, leader, in
     * sync) and moves in flight. Reads ZooKeeper: never on an event loop.
     */
    Map<String, Object> status();
}
