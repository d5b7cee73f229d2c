package io.walden.server.http;

import io.netty.handler.codec.http.HttpMethod;
import io.walden.server.admin.AdminApi;
import io.walden.server.auth.Role;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

import static io.netty.handler.codec.http.HttpMethod.DELETE;
import static io.netty.handler.codec.http.HttpMethod.GET;
import static io.netty.handler.codec.http.HttpMethod.PATCH;
import static io.netty.handler.codec.http.HttpMethod.POST;
import static io.netty.handler.codec.http.HttpMethod.PUT;
import static io.walden.server.auth.Role.ADMIN;
import static io.walden.server.auth.Role.READ;

/**
 * Every HTTP endpoint, each declared once (docs/http-api.md lists the same), a log's data paths as {@link LogPaths}
 * builds them for the console tools too: the router dispatches by this table, the
 * connection takes each request's {@link Route.Kind} from it, and the gate the role a token needs and the body limit.
 * Every endpoint declares the {@link Role} it needs, unless it is declared {@code readOnly} (open); a request no route
 * matches needs a token of any role, unless a read-only route has its path (a HEAD or a POST to {@code /health} is
 * answered 405, not 401). So a new endpoint cannot be left open by forgetting a list.
 *
 * <p>Thread-safety: immutable once built; lookups from any event loop. A lookup is one hash probe (literal paths) or a
 * short scan of the few named routes: {@code /health} stays at the C floor.
 */
public final class Routes {
    /** A cursor's name in a route's path: its last segment, which the cursor handlers read. */
    private static final String CURSOR = "{name}";
    private final List<Route> all;
    /** Literal paths to their routes (a few methods each). */
    private final Map<String, Route[]> literal = new HashMap<>();
    /** Routes with a named segment. */
    private final List<Route> named = new ArrayList<>();

    /** A table of {@code all}: the sidecar's is {@link #of}; a test may build a small one. */
    Routes(List<Route> all) {
        this.all = List.copyOf(all);
        for (Route r : all) {
            if (r.templated()) {
                named.add(r);
            } else {
                literal.merge(r.path(), new Route[]{r}, Routes::concat);
            }
        }
    }

    /**
     * The sidecar's endpoints. {@code /v1/records…} and {@code /v1/cursors…} are the log {@code default}'s, served
     * straight by its APIs (the hot path: one hash probe); {@code /v1/logs/{log}/…} find their log first
     * ({@link ServedLogs}), the same parameters and answers on every log.
     */
    public static Routes of(DataApi data, CursorApi cursors, LogsApi logs, ServedLogs served, AdminApi admin,
                            HeldRecordsApi held, ClusterApi cluster) {
        Set<String> appendParams = Set.of("durability", "type", "compression");
        Set<String> readParams = Set.of("from", "from_time", "cursor", "limit", "wait_ms", "visibility");
        Set<String> streamParams = Set.of("from", "from_time", "cursor", "visibility");
        return new Routes(List.of(
                probe(GET, "/", Route.Kind.OTHER, admin::page),
                probe(GET, "/health", Route.Kind.FREE, admin::health),
                probe(GET, "/ready", Route.Kind.FREE, admin::ready),
                probe(GET, "/metrics", Route.Kind.FREE, admin::metrics),
                readOnly(GET, "/admin/status", Route.Kind.OTHER, admin::status),
                readOnly(GET, "/admin/segments", Route.Kind.OTHER, admin::segments),
                route(ADMIN, GET, "/admin/cluster", Route.Kind.OTHER, Set.of(), cluster::status),
                route(ADMIN, POST, "/admin/drain", Route.Kind.OTHER, Set.of(), cluster::drain),
                route(ADMIN, GET, "/admin/drain", Route.Kind.OTHER, Set.of(), cluster::drainStatus),
                route(ADMIN, DELETE, "/admin/drain", Route.Kind.OTHER, Set.of(), cluster::undrain),
                readOnly(GET, "/v1/openapi.json", Route.Kind.OTHER, ApiDocument::serve),
                records(POST, LogPaths.DEFAULT.records(), appendParams, data::append),
                route(READ, GET, LogPaths.DEFAULT.records(), Route.Kind.OTHER, readParams, data::read),
                records(POST, LogPaths.DEFAULT.batch(), appendParams, data::batch),
                route(READ, GET, LogPaths.DEFAULT.stream(), Route.Kind.STREAM, streamParams, data::stream),
                route(READ, GET, LogPaths.DEFAULT.cursors(), Route.Kind.OTHER, Set.of(), cursors::list),
                route(READ, PUT, LogPaths.DEFAULT.cursor(CURSOR), Route.Kind.OTHER, Set.of(), cursors::set),
                route(READ, GET, LogPaths.DEFAULT.cursor(CURSOR), Route.Kind.OTHER, Set.of(), cursors::get),
                route(READ, DELETE, LogPaths.DEFAULT.cursor(CURSOR), Route.Kind.OTHER, Set.of(), cursors::delete),
                route(READ, GET, LogPaths.LOGS, Route.Kind.OTHER, Set.of(), logs::list),
                route(ADMIN, POST, LogPaths.LOGS, Route.Kind.OTHER, Set.of(), logs::create),
                route(READ, GET, LogPaths.LOG, Route.Kind.OTHER, Set.of(), logs::describe),
                route(ADMIN, PATCH, LogPaths.LOG, Route.Kind.OTHER, Set.of(), logs::change),
                route(ADMIN, DELETE, LogPaths.LOG, Route.Kind.OTHER, Set.of("force"), logs::delete),
                records(POST, LogPaths.TEMPLATE.records(), appendParams,
                        served.appendHandler(false, (l, ex) -> l.data().append(ex))),
                route(READ, GET, LogPaths.TEMPLATE.records(), Route.Kind.OTHER, readParams,
                        served.handler((l, ex) -> l.data().read(ex))),
                records(POST, LogPaths.TEMPLATE.batch(), appendParams,
                        served.appendHandler(true, (l, ex) -> l.data().batch(ex))),
                route(READ, GET, LogPaths.TEMPLATE.stream(), Route.Kind.STREAM, streamParams,
                        served.handler((l, ex) -> l.data().stream(ex))),
                route(READ, GET, LogPaths.TEMPLATE.cursors(), Route.Kind.OTHER, Set.of(),
                        served.handler((l, ex) -> l.cursors().list(ex))),
                route(READ, PUT, LogPaths.TEMPLATE.cursor(CURSOR), Route.Kind.OTHER, Set.of(),
                        served.handler((l, ex) -> l.cursors().set(ex))),
                route(READ, GET, LogPaths.TEMPLATE.cursor(CURSOR), Route.Kind.OTHER, Set.of(),
                        served.handler((l, ex) -> l.cursors().get(ex))),
                route(READ, DELETE, LogPaths.TEMPLATE.cursor(CURSOR), Route.Kind.OTHER, Set.of(),
                        served.handler((l, ex) -> l.cursors().delete(ex))),
                route(ADMIN, POST, "/admin/checkpoint", Route.Kind.OTHER, Set.of("lsn"), admin::checkpoint),
                route(ADMIN, PUT, "/admin/sync-replicas", Route.Kind.OTHER, Set.of(), admin::syncReplicas),
                route(ADMIN, POST, "/admin/promote", Route.Kind.OTHER, Set.of(), admin::promote),
                route(ADMIN, POST, "/admin/switchover", Route.Kind.OTHER, Set.of("to"), admin::switchover),
                route(ADMIN, DELETE, "/admin/replication-slots", Route.Kind.OTHER, Set.of("name"), admin::dropSlot),
                route(ADMIN, GET, HeldRecordsApi.PATH, Route.Kind.OTHER, Set.of("log", "from", "to", "epoch"), held::serve)));
    }

    /** An endpoint that needs a token of {@code role} (when tokens are configured) and takes a small body. */
    private static Route route(Role role, HttpMethod method, String path, Route.Kind kind, Set<String> params,
                               Consumer<Exchange> handler) {
        return new Route(method, path, kind, role, Route.Body.SMALL, params, handler);
    }

    /** An append: needs a token of role {@code append}, takes up to max-batch-bytes. */
    private static Route records(HttpMethod method, String path, Set<String> params, Consumer<Exchange> handler) {
        return new Route(method, path, Route.Kind.APPEND, Role.APPEND, Route.Body.RECORDS, params, handler);
    }

    /** An endpoint that changes nothing and shows nothing of the data: open to anyone who reaches the port. */
    private static Route readOnly(HttpMethod method, String path, Route.Kind kind, Consumer<Exchange> handler) {
        return new Route(method, path, kind, null, Route.Body.SMALL, Set.of(), handler);
    }

    /** A read-only endpoint that probes and scrapers call: it ignores whatever parameters they add. */
    private static Route probe(HttpMethod method, String path, Route.Kind kind, Consumer<Exchange> handler) {
        return new Route(method, path, kind, null, Route.Body.SMALL, null, handler);
    }

    /** Every route, in declaration order. */
    public List<Route> all() {
        return all;
    }

    /** The route of {@code method} on {@code path}, or null (no such path, or not with that method). */
    Route find(HttpMethod method, String path) {
        Route[] candidates = literal.get(path);
        if (candidates != null) {
            for (Route r : candidates) {
                if (r.method().equals(method)) {
                    return r;
                }
            }
            return null;
        }
        for (Route r : named) {
            if (r.method().equals(method) && r.matches(path)) {
                return r;
            }
        }
        return null;
    }

    /** The methods routed on {@code path} ("GET, POST"), or null when no route has that path. */
    String allowed(String path) {
        StringBuilder methods = new StringBuilder();
        for (Route r : all) {
            if (r.matches(path)) {
                methods.append(methods.length() == 0 ? "" : ", ").append(r.method().name());
            }
        }
        return methods.length() == 0 ? null : methods.toString();
    }

    /**
     * The role a request's token needs, or null when it needs none: its route's; for a request no route matches, none
     * when a read-only route has its path (it is answered 405), else {@code read} (any known token: it is answered 404
     * or 405, and a client without a token learns nothing of the routes).
     */
    Role roleFor(HttpMethod method, String path) {
        Route r = find(method, path);
        if (r != null) {
            return r.role();
        }
        Route[] candidates = literal.get(path);
        if (candidates != null) {
            for (Route c : candidates) {
                if (c.role() == null) {
                    return null;
                }
            }
        }
        return Role.READ;
    }

    private static Route[] concat(Route[] a, Route[] b) {
        Route[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
