package io.walden.server.http;

import java.util.Map;
import java.util.concurrent.Executor;

/**
 * Where a cluster's logs are (docs/cluster.md), for the HTTP API: a request for a log led by another server is
 * redirected there; {@code POST /v1/logs} and {@code DELETE /v1/logs/{log}} add and remove the log in the whole
 * cluster; {@code GET /v1/logs/{log}} says where its primary and replicas are; {@code GET /admin/cluster} shows it all.
 *
 * <p>Thread-safety: any thread; {@link #primaryElsewhere} and {@link #where} answer from memory, never waiting.
 */
public interface ClusterCatalog extends ServedLogs.PrimaryLocator {
    /** Whether {@code log} is one of the cluster's logs (placed by it), held here or not. */
    boolean isClusterLog(String log);

    /**
     * Adds {@code log} to the cluster with {@code replicas} copies (its primary included), and returns once a server
     * leads it: {@link #where} it is.
     */
    Map<String, Object> create(String log, int replicas) throws Exception;

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
     * The cluster as this server sees it: its servers, and each log's placement, leadership record (epoch, leader, in
     * sync) and moves in flight. Reads ZooKeeper: never on an event loop.
     */
    Map<String, Object> status();
}
