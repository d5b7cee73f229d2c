package io.walden.server.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.walden.server.admin.AdminApi;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Routes requests to the data and admin APIs (docs/http-api.md), and counts the requests in flight for a graceful
 * stop. The bearer token and the body's size were checked by {@link RequestGate} before the body was buffered.
 * Shared by every connection ({@link HttpConnection} holds a connection's state).
 *
 * <p>Thread-safety: immutable routes and an atomic counter; {@link #dispatch} runs on a connection's event loop.
 */
public final class HttpRouter {
    private static final Logger LOG = LoggerFactory.getLogger(HttpRouter.class);
    static final String RECORDS = "/v1/records";
    static final String STREAM = "/v1/records/stream";

    private record Route(HttpMethod method, Consumer<Exchange> handler) {
    }

    private final Map<String, Route> routes;
    private final Consumer<Exchange> append;
    private final Consumer<Exchange> read;
    private final CursorApi cursors;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final java.util.function.UnaryOperator<String> redact;

    /**
     * @param dataDir the log directory: its absolute path is cut from error details (clients see file names only)
     */
    public HttpRouter(DataApi data, CursorApi cursors, AdminApi admin, java.nio.file.Path dataDir) {
        String dir = dataDir.toAbsolutePath().normalize().toString();
        this.redact = message -> message.replace(dir + java.io.File.separator, "").replace(dir, "the data directory");
        this.append = data::append;
        this.read = data::read;
        this.cursors = cursors;
        this.routes = Map.ofEntries(
                Map.entry(RECORDS, new Route(null, null)), // GET reads, POST appends: resolved in dispatch()
                Map.entry("/v1/records/batch", new Route(HttpMethod.POST, data::batch)),
                Map.entry(STREAM, new Route(HttpMethod.GET, data::stream)),
                Map.entry("/", new Route(HttpMethod.GET, admin::page)),
                Map.entry("/health", new Route(HttpMethod.GET, admin::health)),
                Map.entry("/ready", new Route(HttpMethod.GET, admin::ready)),
                Map.entry("/metrics", new Route(HttpMethod.GET, admin::metrics)),
                Map.entry("/admin/status", new Route(HttpMethod.GET, admin::status)),
                Map.entry("/admin/segments", new Route(HttpMethod.GET, admin::segments)),
                Map.entry("/admin/checkpoint", new Route(HttpMethod.POST, admin::checkpoint)),
                Map.entry("/admin/sync-replicas", new Route(HttpMethod.PUT, admin::syncReplicas)),
                Map.entry("/admin/promote", new Route(HttpMethod.POST, admin::promote)),
                Map.entry("/admin/switchover", new Route(HttpMethod.POST, admin::switchover)),
                Map.entry("/admin/replication-slots", new Route(HttpMethod.DELETE, admin::dropSlot)));
    }

    /** The handler of one new connection (placed last in its pipeline). */
    public io.netty.channel.ChannelHandler newConnection() {
        return new HttpConnection(this);
    }

    /** Requests received and not yet finished (streams included until they end). */
    public int inFlight() {
        return inFlight.get();
    }

    void started() {
        inFlight.incrementAndGet();
    }

    void finished() {
        inFlight.decrementAndGet();
    }

    String redact(String message) {
        return redact.apply(message);
    }

    /** What a request does, for which requests may run beside it on a connection (see HttpConnection). */
    enum Kind {
        /** An append ({@code POST /v1/records}, {@code POST /v1/records/batch}): appends keep their order in the log. */
        APPEND,
        /** Touches no data ({@code /health}, {@code /ready}, {@code /metrics}): may run beside anything. */
        FREE,
        /** A stream: owns the connection once it starts. */
        STREAM,
        /** Anything else: runs once every request before it was answered. */
        OTHER
    }

    private static final java.util.Set<String> FREE_PATHS = java.util.Set.of("/health", "/ready", "/metrics");

    Kind kind(Exchange ex) {
        String path = ex.path();
        HttpMethod method = ex.request().method();
        if (HttpMethod.POST.equals(method) && (path.equals(RECORDS) || path.equals("/v1/records/batch"))) {
            return Kind.APPEND;
        }
        if (HttpMethod.GET.equals(method) && FREE_PATHS.contains(path)) {
            return Kind.FREE;
        }
        return HttpMethod.GET.equals(method) && path.equals(STREAM) ? Kind.STREAM : Kind.OTHER;
    }

    /** Runs the request's handler; whatever it throws becomes the request's answer. */
    void dispatch(Exchange ex) {
        try {
            route(ex);
        } catch (Throwable e) {
            ApiErrors.answer(ex, e);
        }
    }

    private void route(Exchange ex) {
        if (HttpMethod.HEAD.equals(ex.request().method())) {
            ex.closeAfterAnswer(); // the encoder does not know a HEAD answer has no body: the client could not parse on
        }
        String path = ex.path();
        if (path.startsWith(CursorApi.PREFIX) && (path.length() == CursorApi.PREFIX.length() || path.charAt(CursorApi.PREFIX.length()) == '/')) {
            cursors.handle(ex);
            return;
        }
        Route route = routes.get(path);
        if (route == null) {
            ex.error(HttpResponseStatus.NOT_FOUND, "not_found", "no endpoint " + path + " (see docs/http-api.md)");
            return;
        }
        HttpMethod method = ex.request().method();
        Consumer<Exchange> handler = route.handler();
        if (handler == null) {
            handler = HttpMethod.POST.equals(method) ? append : HttpMethod.GET.equals(method) ? read : null;
            if (handler == null) {
                methodNotAllowed(ex, "GET, POST");
                return;
            }
        } else if (!route.method().equals(method)) {
            methodNotAllowed(ex, route.method().name());
            return;
        }
        handler.accept(ex);
    }

    static void methodNotAllowed(Exchange ex, String allowed) {
        ex.error(HttpResponseStatus.METHOD_NOT_ALLOWED, "method_not_allowed",
                ex.request().method() + " is not allowed on " + ex.path() + "; use " + allowed);
    }

    void connectionError(ChannelHandlerContext ctx, Throwable cause) {
        LOG.debug("Closing HTTP connection from {}: {}", ctx.channel().remoteAddress(), cause.toString());
    }
}
