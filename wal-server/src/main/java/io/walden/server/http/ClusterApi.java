package io.walden.server.http;

import io.netty.handler.codec.http.HttpResponseStatus;

import java.util.Map;
import java.util.concurrent.ExecutorService;

/**
 * The cluster's admin endpoints (docs/http-api.md, "Cluster"; docs/cluster.md): {@code GET /admin/cluster} shows the
 * servers, the logs' placements and moves; {@code POST /admin/drain} moves every log off this server before it is
 * taken down, {@code DELETE /admin/drain} lets logs be placed on it again. Each reads or writes ZooKeeper, so each runs
 * on the admin thread, never on an event loop. A server outside a cluster answers them 404 {@code not_in_a_cluster}.
 *
 * <p>Thread-safety: stateless beyond the cluster it serves.
 */
public final class ClusterApi {
    private final ExecutorService admin;
    /** The cluster this server is part of ({@code --cluster}), or null. */
    private volatile ClusterCatalog cluster;

    public ClusterApi(ExecutorService admin) {
        this.admin = admin;
    }

    /** From now on the endpoints answer for {@code cluster}. */
    public void inCluster(ClusterCatalog cluster) {
        this.cluster = cluster;
    }

    /** GET /admin/cluster: the servers, and each log's placement, leadership and moves in flight. */
    void status(Exchange ex) {
        ClusterCatalog c = inCluster(ex);
        if (c != null) {
            offLoop(ex, () -> ex.json(HttpResponseStatus.OK, c.status()));
        }
    }

    /**
     * POST /admin/drain: starts the drain, or reports it when it runs; 202 while this server still holds copies of logs,
     * 200 once it holds none (a client repeats the POST, or reads GET /admin/cluster, until then).
     */
    void drain(Exchange ex) {
        ClusterCatalog c = inCluster(ex);
        if (c != null) {
            offLoop(ex, () -> answer(ex, call(() -> c.drain(true))));
        }
    }

    /** GET /admin/drain: this server's drain as POST answers it, changing nothing. */
    void drainStatus(Exchange ex) {
        ClusterCatalog c = inCluster(ex);
        if (c != null) {
            offLoop(ex, () -> answer(ex, call(c::drainStatus)));
        }
    }

    /** DELETE /admin/drain: ends the drain; Helix may place logs here again (it moves some back for balance). */
    void undrain(Exchange ex) {
        ClusterCatalog c = inCluster(ex);
        if (c != null) {
            offLoop(ex, () -> ex.json(HttpResponseStatus.OK, call(() -> c.drain(false))));
        }
    }

    private static void answer(Exchange ex, Map<String, Object> drain) {
        boolean done = Boolean.TRUE.equals(drain.get("done"));
        ex.json(done || !Boolean.TRUE.equals(drain.get("draining")) ? HttpResponseStatus.OK : HttpResponseStatus.ACCEPTED,
                drain);
    }

    private ClusterCatalog inCluster(Exchange ex) {
        ClusterCatalog c = cluster;
        if (c == null) {
            ex.error(HttpResponseStatus.NOT_FOUND, "not_in_a_cluster", "this server is not part of a cluster (--cluster)");
        }
        return c;
    }

    private interface ClusterCall {
        Map<String, Object> call() throws Exception;
    }

    private static Map<String, Object> call(ClusterCall call) {
        try {
            return call.call();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("the cluster did not answer: " + e.getMessage(), e);
        }
    }

    private void offLoop(Exchange ex, Runnable work) {
        ApiErrors.offLoop(admin, ex, work, "shutting_down", "the server is stopping");
    }
}
