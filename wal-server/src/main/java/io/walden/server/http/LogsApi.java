package io.walden.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.walden.core.Wal;
import io.walden.server.admin.AppendRates;
import io.walden.server.admin.LogDescriptions;
import io.walden.server.auth.Grant;
import io.walden.server.config.PerLogSettings;
import io.walden.server.logs.LogCatalog;
import io.walden.server.logs.LogRefusedException;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;


/**
 * The logs themselves over HTTP (docs/http-api.md, "Logs"): {@code POST /v1/logs} creates one, {@code GET /v1/logs}
 * lists them, {@code GET}, {@code PATCH} and {@code DELETE /v1/logs/{log}} describe, change and delete one. A creation,
 * change or deletion forces files, so each runs on the admin thread, one at a time, never on an event loop; so do the
 * descriptions, which read every log's status. In a cluster, a creation waits for the log's placement and asks its
 * primary for its description on the cluster's own threads ({@link ClusterCatalog#creations()}), not the admin thread.
 *
 * <p>Thread-safety: stateless beyond the catalog it serves.
 */
public final class LogsApi {
    private static final Set<String> BODY_FIELDS = Set.of("name", "settings");

    private final LogCatalog catalog;
    private final AppendRates rates;
    private final ExecutorService admin;
    /** The cluster this server is part of ({@code --cluster}), or null. */
    private volatile ClusterCatalog cluster;

    public LogsApi(LogCatalog catalog, AppendRates rates, ExecutorService admin) {
        this.catalog = catalog;
        this.rates = rates;
        this.admin = admin;
    }

    /**
     * From now on logs are created and deleted in the whole cluster, described with where their primary and replicas
     * are, and changed at their primary (docs/cluster.md).
     */
    public void inCluster(ClusterCatalog cluster) {
        this.cluster = cluster;
    }

    /**
     * GET /v1/logs: every log the request's token may use ({@link Exchange#grant()}), {@code default} first. In a
     * cluster, each log held here says where its primary and replicas are, and {@code elsewhere} lists the cluster's
     * logs this server holds no copy of, with where they are.
     */
    void list(Exchange ex) {
        Grant grant = ex.grant();
        ClusterCatalog c = cluster;
        offLoop(ex, () -> {
            List<Map<String, Object>> logs = new ArrayList<>();
            for (String name : catalog.names()) {
                Wal wal = grant.permitsLog(name) ? catalog.find(name) : null;
                if (wal != null) { // else not the token's, or deleted since the names were read
                    Map<String, Object> summary = LogDescriptions.summary(name, wal, rates);
                    if (c != null && c.isClusterLog(name)) {
                        summary = new LinkedHashMap<>(summary);
                        summary.putAll(c.where(name));
                    }
                    logs.add(summary);
                }
            }
            if (c == null) {
                ex.json(HttpResponseStatus.OK, Map.of("logs", logs));
                return;
            }
            List<Map<String, Object>> elsewhere = new ArrayList<>();
            for (String name : c.logNames()) {
                if (grant.permitsLog(name) && catalog.find(name) == null) {
                    Map<String, Object> one = new LinkedHashMap<>();
                    one.put("name", name);
                    one.putAll(c.where(name));
                    elsewhere.add(one);
                }
            }
            ex.json(HttpResponseStatus.OK, Map.of("logs", logs, "elsewhere", elsewhere));
        });
    }

    /** POST /v1/logs with {@code {"name": "orders", "settings": {...}}}: 201 with the new log's description. */
    void create(Exchange ex) {
        JsonNode body = body(ex, true);
        JsonNode nameNode = body.get("name");
        if (nameNode == null || !nameNode.isTextual()) {
            throw new IllegalArgumentException("the body must name the log: {\"name\": \"orders\", \"settings\": {...}}");
        }
        String name = nameNode.asText();
        if (!ex.grant().permitsLog(name)) { // the gate checked the role; the name was in the body, unread then
            ex.forbidden("this token may not create the log '" + name + "' (it is limited to "
                    + ex.grant().describeLogs() + ")");
            return;
        }
        ClusterCatalog c = cluster;
        if (c != null) {
            Map<String, String> texts = settings(body);
            int replicas = replicas(texts);
            Map<PerLogSettings.Entry, Object> checked = PerLogSettings.read(texts, "settings", true);
            ApiErrors.offLoop(c.creations(), ex, () -> {
                try {
                    catalog.checkSettings(checked); // refused here, before the cluster holds anything of the log
                    c.create(name, replicas, texts);
                    Wal held = catalog.find(name);
                    if (c.primaryElsewhere(name) == null && held != null) { // led here
                        Map<String, Object> described = new LinkedHashMap<>(LogDescriptions.describe(name, held, rates, true));
                        described.putAll(c.where(name));
                        ex.json(HttpResponseStatus.CREATED, described);
                    } else {
                        ex.json(HttpResponseStatus.CREATED, c.describeAtPrimary(name, ex.request().headers()
                                .get(HttpHeaderNames.AUTHORIZATION)));
                    }
                } catch (RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IllegalStateException("could not add log " + name + " to the cluster: " + e.getMessage(), e);
                }
            }, "shutting_down", "the server is stopping");
            return;
        }
        Map<PerLogSettings.Entry, Object> settings = PerLogSettings.read(settings(body), "settings", true);
        offLoop(ex, () -> {
            Wal wal = catalog.create(name, settings);
            ex.json(HttpResponseStatus.CREATED, LogDescriptions.describe(name, wal, rates, catalog.replicated(name)));
        });
    }

    /** GET /v1/logs/{log}: every setting in force, positions, retention and its holders, cursors. */
    void describe(Exchange ex) {
        String name = Route.name(ex);
        ClusterCatalog c = cluster;
        offLoop(ex, () -> {
            if (c == null || !c.isClusterLog(name)) {
                ex.json(HttpResponseStatus.OK, LogDescriptions.describe(name, existing(name), rates, catalog.replicated(name)));
                return;
            }
            Wal held = catalog.find(name);
            String primary = c.primaryElsewhere(name);
            if (held == null && primary != null) { // described where it is led
                ex.redirectToPrimary(name, primary);
                return;
            }
            if (held == null) {
                throw new LogRefusedException(LogRefusedException.Reason.NOT_FOUND, "no server leads log '" + name
                        + "' now, and this server holds no copy of it: see GET /admin/cluster");
            }
            Map<String, Object> described = new LinkedHashMap<>(LogDescriptions.describe(name, held, rates, true));
            described.putAll(c.where(name));
            ex.json(HttpResponseStatus.OK, described);
        });
    }

    /** PATCH /v1/logs/{log} with {@code {"settings": {...}}}: the log reopens with them; 200 with its description. */
    void change(Exchange ex) {
        String name = Route.name(ex);
        ClusterCatalog c = cluster;
        String primary = c == null ? null : c.primaryElsewhere(name);
        if (primary != null) { // a log's settings change at its primary, which tells its replicas
            ex.redirectToPrimary(name, primary);
            return;
        }
        JsonNode body = body(ex, false);
        Map<String, String> texts = settings(body);
        boolean inCluster = c != null && c.isClusterLog(name);
        // a cluster log's copies: Helix's placement changes (a new copy is placed and catches up before any goes)
        Integer replicas = inCluster && texts.containsKey("replicas") ? replicas(texts) : null;
        Map<PerLogSettings.Entry, Object> settings = PerLogSettings.read(texts, "settings", false);
        offLoop(ex, () -> {
            if (replicas != null) {
                try {
                    c.setReplicas(name, replicas);
                } catch (RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new LogRefusedException(LogRefusedException.Reason.CLUSTER_UNAVAILABLE, "the cluster's"
                            + " ZooKeeper did not answer: " + e.getMessage());
                }
            }
            Wal wal = settings.isEmpty() ? existing(name) : catalog.change(name, settings);
            Map<String, Object> described = new LinkedHashMap<>(LogDescriptions.describe(name, wal, rates,
                    catalog.replicated(name)));
            if (inCluster) {
                described.putAll(c.where(name));
            }
            ex.json(HttpResponseStatus.OK, described);
        });
    }

    /** DELETE /v1/logs/{log}[?force=true]: 204; refused while a cursor needs the log, unless forced. */
    void delete(Exchange ex) {
        String name = Route.name(ex);
        String force = ex.param("force");
        if (force != null && !force.equals("true") && !force.equals("false")) {
            throw new IllegalArgumentException("force must be true or false, not '" + force + "'");
        }
        ClusterCatalog c = cluster;
        offLoop(ex, () -> {
            if (c != null && c.isClusterLog(name)) {
                try {
                    c.delete(name); // every server drops its copy, cursors and slots with it
                } catch (RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IllegalStateException("could not remove log " + name + " from the cluster: " + e.getMessage(), e);
                }
            } else {
                catalog.delete(name, "true".equals(force));
            }
            ex.text(HttpResponseStatus.NO_CONTENT, "", "text/plain");
        });
    }

    private Wal existing(String name) {
        Wal wal = catalog.find(name);
        if (wal == null) {
            throw new LogRefusedException(LogRefusedException.Reason.NOT_FOUND, "no log '" + name + "'");
        }
        return wal;
    }

    /** The JSON body, an object with only the known fields (a misspelt one is refused, not ignored). */
    private static JsonNode body(Exchange ex, boolean creating) {
        String example = creating ? "{\"name\": \"orders\", \"settings\": {\"retention-time\": \"7d\"}}"
                : "{\"settings\": {\"retention-time\": \"7d\"}}";
        JsonNode body;
        try {
            body = Exchange.JSON.readTree(ex.request().content().toString(StandardCharsets.UTF_8));
        } catch (Exception e) {
            throw new IllegalArgumentException("the body must be JSON: " + example);
        }
        if (body == null || !body.isObject()) {
            throw new IllegalArgumentException("the body must be a JSON object: " + example);
        }
        for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
            String field = it.next();
            if (!BODY_FIELDS.contains(field) || !creating && field.equals("name")) {
                throw new IllegalArgumentException("unknown field '" + field + "': " + example);
            }
        }
        return body;
    }

    /**
     * A cluster log's copies ({@code replicas}, the primary included; default 3, fewer when fewer servers are live),
     * taken out of {@code settings}: the others are the log's own, as outside a cluster.
     */
    private static int replicas(Map<String, String> settings) {
        String text = settings.remove("replicas");
        if (text == null) {
            return 3;
        }
        int replicas;
        try {
            replicas = Integer.parseInt(text);
        } catch (NumberFormatException n) {
            replicas = 0;
        }
        if (replicas < 1 || replicas > 16) {
            throw new IllegalArgumentException("settings.replicas must be a whole number from 1 to 16, not " + text);
        }
        return replicas;
    }

    /** The body's {@code settings} as texts ({@code null} kept: no limit), in the order given. */
    private static Map<String, String> settings(JsonNode body) {
        Map<String, String> out = new LinkedHashMap<>();
        JsonNode settings = body.get("settings");
        if (settings == null || settings.isNull()) {
            return out;
        }
        if (!settings.isObject()) {
            throw new IllegalArgumentException("settings must be a JSON object of setting names to values");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = settings.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode v = e.getValue();
            if (!v.isNull() && !v.isTextual() && !v.isIntegralNumber()) {
                throw new IllegalArgumentException("settings." + e.getKey() + " must be a text or a whole number");
            }
            out.put(e.getKey(), v.isNull() ? null : v.asText());
        }
        return out;
    }

    private void offLoop(Exchange ex, Runnable work) {
        ApiErrors.offLoop(admin, ex, work, "shutting_down", "the server is stopping");
    }
}
