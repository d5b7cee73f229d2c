package io.walden.server.http;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.nio.file.Path;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * Dispatches requests by the route table ({@link Routes}: the data, cursor and admin APIs of docs/http-api.md), and
 * counts the requests in flight for a graceful stop. The bearer token and the body's size were checked by
 * {@link RequestGate} before the body was buffered. Shared by every connection ({@link HttpConnection} holds a
 * connection's state).
 *
 * <p>Thread-safety: an immutable table and an atomic counter; {@link #dispatch} runs on a connection's event loop.
 */
public final class HttpRouter {
    private static final Logger LOG = LoggerFactory.getLogger(HttpRouter.class);

    private final Routes routes;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final UnaryOperator<String> redact;
    private final Access access;
    /** Set once the server stops ({@link #stopAppends}); read by every connection's event loop. */
    private volatile boolean stopping;

    /**
     * @param dataDir the log directory: its absolute path is cut from error details (clients see file names only)
     * @param access  the tokens and the refusals' counters, which a handler's own refusal counts in too
     */
    public HttpRouter(Routes routes, Path dataDir, Access access) {
        String dir = dataDir.toAbsolutePath().normalize().toString();
        this.redact = message -> message.replace(dir + File.separator, "").replace(dir, "the data directory");
        this.routes = routes;
        this.access = access;
    }

    /** The table this router dispatches by (the gate reads it too). */
    public Routes routes() {
        return routes;
    }

    Access access() {
        return access;
    }

    /** The handler of one new connection (placed last in its pipeline). */
    public ChannelHandler newConnection() {
        return new HttpConnection(this);
    }

    /**
     * The server stops: an append that arrives from now on, on a connection opened before, is refused before anything
     * is written (503 {@code shutting_down}, the connection closed after the answer), so that a client retrying on it
     * goes to another server rather than writing the record again into a log whose answers can no longer confirm it.
     * The requests already in flight finish as before; reads and admin calls are still answered.
     */
    public void stopAppends() {
        stopping = true;
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

    /** Finds the request's route (null: none matches) and so its kind, before it is queued on its connection. */
    void route(Exchange ex) {
        Route route = routes.find(ex.request().method(), ex.path());
        ex.route(route, route == null ? Route.Kind.OTHER : route.kind());
    }

    /** Runs the request's handler; whatever it throws becomes the request's answer. */
    void dispatch(Exchange ex) {
        try {
            handle(ex);
        } catch (Throwable e) {
            ApiErrors.answer(ex, e);
        }
    }

    private void handle(Exchange ex) {
        if (HttpMethod.HEAD.equals(ex.request().method())) {
            ex.closeAfterAnswer(); // the encoder does not know a HEAD answer has no body: the client could not parse on
        }
        Route route = ex.route();
        if (route != null) {
            String unknown = route.params() == null ? null : ex.unknownParam(route.params());
            if (unknown != null) {
                ex.error(HttpResponseStatus.BAD_REQUEST, "bad_parameter", "unknown parameter '" + unknown + "' for "
                        + route.method() + " " + route.path() + (route.params().isEmpty() ? ": it takes none"
                        : " (known: " + String.join(", ", new TreeSet<>(route.params())) + ")") + "; nothing was done");
                return;
            }
            if (stopping && route.kind() == Route.Kind.APPEND) {
                ex.closeAfterAnswer();
                ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "shutting_down", "the server is stopping: nothing was "
                        + "written; append on another server, or on this one once it is back");
                return;
            }
            route.handler().accept(ex);
            return;
        }
        String allowed = routes.allowed(ex.path());
        if (allowed == null) {
            ex.error(HttpResponseStatus.NOT_FOUND, "not_found", "no endpoint " + ex.path() + " (see docs/http-api.md)");
        } else {
            ex.error(HttpResponseStatus.METHOD_NOT_ALLOWED, "method_not_allowed",
                    ex.request().method() + " is not allowed on " + ex.path() + "; use " + allowed);
        }
    }

    void connectionError(ChannelHandlerContext ctx, Throwable cause) {
        LOG.debug("Closing HTTP connection from {}: {}", ctx.channel().remoteAddress(), cause.toString());
    }
}
