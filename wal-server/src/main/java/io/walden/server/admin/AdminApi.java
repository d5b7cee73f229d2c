package io.walden.server.admin;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.walden.core.Lsn;
import io.walden.core.SegmentInfo;
import io.walden.core.Wal;
import io.walden.core.WalClosedException;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.primary.ReplicationServer;
import io.walden.server.ReplicationRole;
import io.walden.server.group.FailoverController;
import io.walden.server.logs.LogCatalog;
import io.walden.server.http.ClusterCatalog;
import io.walden.server.http.Exchange;
import io.walden.server.http.HttpResponses;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * The admin API (docs/http-api.md): liveness, readiness, Prometheus metrics, status, segments, checkpoint.
 * Field names are a contract used by tools outside this repository.
 */
public final class AdminApi {
    private final Wal wal;
    private final PrometheusMeterRegistry registry;
    private final BooleanSupplier accepting;
    private final Executor blocking;
    private final ReplicationRole role;
    /** This server's part in a replica group, or null for a server on its own. */
    private final FailoverController group;
    private final StatusReport report;

    /**
     * @param blocking  runs admin work that blocks (truncation and promotion force files), off the event loops
     * @param role      the server's place in replication (primary or replica), which a promotion changes
     * @param group     the server's part in a replica group (automatic failover), or null
     * @param listening where the server listens and whether it needs a token, for the status
     */
    public AdminApi(Wal wal, PrometheusMeterRegistry registry, BooleanSupplier accepting, Executor blocking,
                    ReplicationRole role, FailoverController group, Listening listening, LogCatalog logs,
                    AppendRates rates) {
        this.group = group;
        this.report = new StatusReport(wal, registry, role, group, listening, logs, rates);
        this.wal = wal;
        this.registry = registry;
        this.accepting = accepting;
        this.blocking = blocking;
        this.role = role;
    }

    /** From now on the status shows the cluster this server is part of ({@code "cluster"}), as it sees it. */
    public void inCluster(ClusterCatalog cluster) {
        report.inCluster(cluster);
    }

    /** GET / : the live status page, with the status of the moment in it ({@link StatusPage}). */
    public void page(Exchange ex) {
        ex.text(HttpResponseStatus.OK, StatusPage.render(report.build(ex::redact)), "text/html; charset=utf-8");
    }

    /** GET /health: {@code {"status":"alive"}}, a constant answer (the load balancers' and monitors' hot path). */
    public void health(Exchange ex) {
        ex.respondEncoded(HttpResponses.health(ex.keepAlive()));
    }

    public void ready(Exchange ex) {
        if (wal.status().isFailed()) {
            ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "log_failed", ex.redact(wal.status().failureReason())
                    + "; restart the server to recover");
        } else if (!accepting.getAsBoolean() || wal.isClosed()) {
            ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "shutting_down", "the server is stopping");
        } else {
            ex.json(HttpResponseStatus.OK, Map.of("status", "ready"));
        }
    }

    public void metrics(Exchange ex) {
        ex.text(HttpResponseStatus.OK, registry.scrape(), "text/plain; version=0.0.4; charset=utf-8");
    }

    public void status(Exchange ex) {
        ex.json(HttpResponseStatus.OK, report.build(ex::redact));
    }

    /** PUT /admin/sync-replicas with the policy as body ('FIRST n (a, b)' / 'ANY n (a, b)'; empty clears it). */
    public void syncReplicas(Exchange ex) {
        if (!accepting.getAsBoolean()) { // a stop ended the commits waiting for replicas: a policy now would revive them
            ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "shutting_down", "the server is stopping: its synchronous "
                    + "policy no longer changes");
            return;
        }
        if (group != null) {
            ex.error(HttpResponseStatus.CONFLICT, "coordinated", "in a replica group the synchronous policy is the "
                    + "sync-replicas setting of every member (elections depend on it): change it there and restart them one by one");
            return;
        }
        if (role.replica() != null) {
            ex.error(HttpResponseStatus.CONFLICT, "not_a_primary", "this server is a replica of " + role.primary()
                    + "; set the synchronous policy on the primary");
            return;
        }
        ReplicationServer replication = role.server();
        if (replication == null) { // a primary on its own: no replica could ever confirm a commit
            ex.error(HttpResponseStatus.CONFLICT, "no_replication", "this primary accepts no replicas (started with "
                    + "--replication-listen none): restart it with --replication-listen HOST:PORT to use a synchronous policy");
            return;
        }
        String body = ex.request().content().toString(StandardCharsets.UTF_8).trim();
        SyncPolicy policy = body.isEmpty() ? null : SyncPolicy.parse(body);
        replication.policy(policy);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("sync_replicas", policy == null ? null : policy.toString());
        ex.json(HttpResponseStatus.OK, out);
    }

    /**
     * POST /admin/promote : makes this replica a primary (stops following, begins the next epoch durably, accepts
     * appends and replicas). 409 on a primary.
     */
    public void promote(Exchange ex) {
        if (group != null) {
            ex.error(HttpResponseStatus.CONFLICT, "coordinated", "this server is a member of a replica group: its "
                    + "coordinator elects the primary; hand the role over with POST /admin/switchover?to=NAME");
            return;
        }
        if (role.replica() == null) {
            ex.error(HttpResponseStatus.CONFLICT, "not_a_replica", "this server is already a primary (epoch " + wal.status().epoch() + ")");
            return;
        }
        try {
            blocking.execute(() -> {
                try {
                    ReplicationRole.Promotion promotion = role.promote();
                    Map<String, Object> out = new LinkedHashMap<>();
                    out.put("role", "primary");
                    out.put("epoch", promotion.epoch().number());
                    out.put("epoch_start_lsn", Lsn.format(promotion.epoch().startLsn()));
                    ex.json(HttpResponseStatus.OK, out);
                } catch (IllegalStateException e) {
                    if (role.replica() == null) {
                        ex.error(HttpResponseStatus.CONFLICT, "not_a_replica", e.getMessage());
                    } else { // could not finish: still a replica, appends still refused; a retry tries again
                        ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "promote_failed", e.getMessage());
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "interrupted", "the server is stopping");
                } catch (RuntimeException e) { // the history could not be written, or the log closed: still a replica
                    ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "promote_failed", e.getMessage());
                }
            });
        } catch (RejectedExecutionException e) {
            ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "busy", "no worker free for the promotion; retry shortly");
        }
    }

    /**
     * POST /admin/switchover?to=NAME : on a group's primary, hands the role to the caught-up replica NAME without losing
     * anything (appends are refused meanwhile, for about a second). 200 with the new primary and epoch once it leads.
     */
    public void switchover(Exchange ex) {
        String to = ex.param("to");
        if (to == null) {
            throw new IllegalArgumentException("to is required: POST /admin/switchover?to=NAME");
        }
        if (group == null) {
            ex.error(HttpResponseStatus.CONFLICT, "not_coordinated", "this server is not a member of a replica group "
                    + "(--coordinator): promote a replica with POST /admin/promote");
            return;
        }
        try {
            blocking.execute(() -> {
                try {
                    FailoverController.Switchover done = group.switchover(to);
                    Map<String, Object> out = new LinkedHashMap<>();
                    out.put("primary", done.epoch().primary());
                    out.put("epoch", done.epoch().epoch());
                    out.put("epoch_start_lsn", Lsn.format(done.epoch().startLsn()));
                    ex.json(HttpResponseStatus.OK, out);
                } catch (NoSuchElementException e) {
                    ex.error(HttpResponseStatus.NOT_FOUND, "unknown_member", e.getMessage());
                } catch (IllegalStateException e) {
                    ex.error(HttpResponseStatus.CONFLICT, "switchover_refused", e.getMessage());
                } catch (TimeoutException e) {
                    ex.error(HttpResponseStatus.GATEWAY_TIMEOUT, "switchover_timeout", e.getMessage());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "interrupted", "the server is stopping");
                } catch (Exception e) {
                    ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "switchover_failed", e.toString());
                }
            });
        } catch (RejectedExecutionException e) {
            ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "busy", "no worker free for the switchover; retry shortly");
        }
    }

    /** DELETE /admin/replication-slots?name= : drops the slot of a replica that is gone for good. */
    public void dropSlot(Exchange ex) {
        String name = ex.param("name");
        if (name == null) {
            throw new IllegalArgumentException("name is required: DELETE /admin/replication-slots?name=NAME");
        }
        ReplicationServer replication = role.server();
        if (replication == null) {
            ex.error(HttpResponseStatus.CONFLICT, "not_a_primary", "this server serves no replicas");
            return;
        }
        try {
            if (!replication.dropSlot(name)) {
                ex.error(HttpResponseStatus.NOT_FOUND, "unknown_slot", "no replication slot named '" + name + "'");
                return;
            }
        } catch (IllegalStateException e) {
            ex.error(HttpResponseStatus.CONFLICT, "replica_connected", e.getMessage());
            return;
        }
        ex.json(HttpResponseStatus.OK, Map.of("dropped", name));
    }

    public void segments(Exchange ex) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (SegmentInfo info : wal.status().segments()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", info.path().getFileName().toString());
            m.put("start_lsn", Lsn.format(info.startLsn()));
            m.put("end_lsn", Lsn.format(info.endLsn()));
            m.put("bytes", info.size());
            out.add(m);
        }
        ex.json(HttpResponseStatus.OK, Map.of("segments", out));
    }

    /** POST /admin/checkpoint?lsn= : removes the segments wholly below lsn's segment (truncateBefore). */
    public void checkpoint(Exchange ex) {
        String lsn = ex.param("lsn");
        if (lsn == null) {
            throw new IllegalArgumentException("lsn is required: POST /admin/checkpoint?lsn=X/Y");
        }
        long before = Lsn.parse(lsn);
        try {
            blocking.execute(() -> {
                try {
                    wal.truncateBefore(before);
                    ex.json(HttpResponseStatus.OK, Map.of("oldest_lsn", Lsn.format(wal.oldestLsn())));
                } catch (RuntimeException e) {
                    ex.error(e instanceof WalClosedException ? HttpResponseStatus.SERVICE_UNAVAILABLE
                            : HttpResponseStatus.INTERNAL_SERVER_ERROR, "checkpoint_failed", e.getMessage());
                }
            });
        } catch (RejectedExecutionException e) {
            ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "busy", "no worker free for the checkpoint; retry shortly");
        }
    }
}
