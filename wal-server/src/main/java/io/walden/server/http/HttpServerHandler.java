package io.walden.server.http;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.AttributeKey;
import io.walden.server.admin.AdminApi;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Routes requests to the data and admin APIs. Reads one request at a time per connection (auto-read off,
 * and a FlowControlHandler in front releases one decoded request per read), so pipelined requests are
 * answered in order; the next is read when the current {@link Exchange} finishes. The bearer token and body
 * size were already checked by {@link RequestGate}, before the body was buffered.
 */
@ChannelHandler.Sharable
public final class HttpServerHandler extends SimpleChannelInboundHandler<Object> {
    private static final Logger LOG = LoggerFactory.getLogger(HttpServerHandler.class);
    private static final AttributeKey<Exchange> CURRENT = AttributeKey.valueOf("walden.exchange");

    private record Route(HttpMethod method, Consumer<Exchange> handler) {
    }

    private final Map<String, Route> routes;
    private final Consumer<Exchange> append;
    private final Consumer<Exchange> read;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final java.util.function.UnaryOperator<String> redact;

    /**
     * @param dataDir the log directory: its absolute path is cut from error details (clients see file names only)
     */
    public HttpServerHandler(DataApi data, AdminApi admin, java.nio.file.Path dataDir) {
        super(false);
        String dir = dataDir.toAbsolutePath().normalize().toString();
        this.redact = message -> message.replace(dir + java.io.File.separator, "").replace(dir, "the data directory");
        this.append = data::append;
        this.read = data::read;
        this.routes = Map.ofEntries(
                Map.entry("/v1/records", new Route(null, null)), // GET reads, POST appends: resolved in route()
                Map.entry("/v1/records/batch", new Route(HttpMethod.POST, data::batch)),
                Map.entry("/v1/records/stream", new Route(HttpMethod.GET, data::stream)),
                Map.entry("/", new Route(HttpMethod.GET, admin::page)),
                Map.entry("/health", new Route(HttpMethod.GET, admin::health)),
                Map.entry("/ready", new Route(HttpMethod.GET, admin::ready)),
                Map.entry("/metrics", new Route(HttpMethod.GET, admin::metrics)),
                Map.entry("/admin/status", new Route(HttpMethod.GET, admin::status)),
                Map.entry("/admin/segments", new Route(HttpMethod.GET, admin::segments)),
                Map.entry("/admin/checkpoint", new Route(HttpMethod.POST, admin::checkpoint)),
                Map.entry("/admin/sync-replicas", new Route(HttpMethod.PUT, admin::syncReplicas)),
                Map.entry("/admin/promote", new Route(HttpMethod.POST, admin::promote)),
                Map.entry("/admin/replication-slots", new Route(HttpMethod.DELETE, admin::dropSlot)));
    }

    /** Requests received and not yet finished (streams included until they end). */
    public int inFlight() {
        return inFlight.get();
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof RequestGate.Refusal) {
            RequestGate.Refusal refusal = (RequestGate.Refusal) msg;
            Exchange ex = start(ctx, refusal.request());
            if (ex != null) {
                ex.closeAfterAnswer(); // its body was not read: nothing after it on this connection can be parsed
                ex.error(refusal.status(), refusal.error(), refusal.detail());
            }
            return;
        }
        if (!(msg instanceof FullHttpRequest)) {
            io.netty.util.ReferenceCountUtil.release(msg);
            return;
        }
        FullHttpRequest request = (FullHttpRequest) msg;
        Exchange ex = start(ctx, request);
        if (ex == null) {
            return;
        }
        if (!request.decoderResult().isSuccess()) {
            ex.closeAfterAnswer();
            ex.error(HttpResponseStatus.BAD_REQUEST, "bad_request", "malformed HTTP request: " + request.decoderResult().cause());
            return;
        }
        try {
            route(ex, request);
        } catch (Throwable e) {
            ApiErrors.answer(ex, e);
        }
    }

    /** Begins an exchange for the next request of a connection, or drops it (null) on a streaming connection. */
    private Exchange start(ChannelHandlerContext ctx, FullHttpRequest request) {
        Exchange current = ctx.channel().attr(CURRENT).get();
        if (current != null && current.isStreaming()) {
            request.release(); // a request sent on a streaming connection: nothing can answer it
            return null;
        }
        ctx.channel().config().setAutoRead(false);
        inFlight.incrementAndGet();
        Exchange ex = new Exchange(ctx, request, (done, keepAlive) -> {
            inFlight.decrementAndGet();
            ctx.channel().attr(CURRENT).compareAndSet(done, null);
            if (keepAlive) {
                // Switching auto-read on issues exactly one read: the FlowControlHandler releases the next queued
                // request (an extra ctx.read() here would release two, and answers would cross).
                ctx.channel().config().setAutoRead(true);
            }
        }, redact);
        ctx.channel().attr(CURRENT).set(ex);
        return ex;
    }

    private void route(Exchange ex, FullHttpRequest request) {
        Route route = routes.get(ex.path());
        if (route == null) {
            ex.error(HttpResponseStatus.NOT_FOUND, "not_found", "no endpoint " + ex.path() + " (see docs/http-api.md)");
            return;
        }
        HttpMethod method = request.method();
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

    private static void methodNotAllowed(Exchange ex, String allowed) {
        ex.error(HttpResponseStatus.METHOD_NOT_ALLOWED, "method_not_allowed",
                ex.request().method() + " is not allowed on " + ex.path() + "; use " + allowed);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        finishCurrent(ctx);
        super.channelInactive(ctx);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            Exchange current = ctx.channel().attr(CURRENT).get();
            if (current == null || !current.isStreaming()) {
                ctx.close(); // an idle or stalled client does not keep a connection forever (a stream may be quiet)
            }
        } else {
            ctx.fireUserEventTriggered(evt);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.debug("Closing HTTP connection from {}: {}", ctx.channel().remoteAddress(), cause.toString());
        finishCurrent(ctx);
        ctx.close();
    }

    private static void finishCurrent(ChannelHandlerContext ctx) {
        Exchange current = ctx.channel().attr(CURRENT).get();
        if (current != null) {
            current.finish();
        }
    }
}
