package io.walden.server.http;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.timeout.IdleStateEvent;
import io.walden.server.admin.AdminApi;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Routes requests to the data and admin APIs, checks the bearer token, and reads one request at a time per
 * connection (so pipelined requests are answered in order). One instance serves every connection.
 */
@ChannelHandler.Sharable
public final class HttpServerHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
    private static final Logger LOG = LoggerFactory.getLogger(HttpServerHandler.class);

    private record Route(HttpMethod method, boolean protectedByToken, Consumer<Exchange> handler) {
    }

    private final Map<String, Route> routes;
    private final byte[] token;
    private final AtomicInteger inFlight = new AtomicInteger();

    public HttpServerHandler(DataApi data, AdminApi admin, String authToken) {
        super(false);
        this.token = authToken == null ? null : ("Bearer " + authToken).getBytes(StandardCharsets.UTF_8);
        this.routes = Map.of(
                "/v1/records", new Route(null, true, null), // GET read, POST append: resolved in route()
                "/v1/records/batch", new Route(HttpMethod.POST, true, data::batch),
                "/v1/records/stream", new Route(HttpMethod.GET, true, data::stream),
                "/", new Route(HttpMethod.GET, false, admin::page),
                "/health", new Route(HttpMethod.GET, false, admin::health),
                "/ready", new Route(HttpMethod.GET, false, admin::ready),
                "/metrics", new Route(HttpMethod.GET, false, admin::metrics),
                "/admin/status", new Route(HttpMethod.GET, false, admin::status),
                "/admin/segments", new Route(HttpMethod.GET, false, admin::segments),
                "/admin/checkpoint", new Route(HttpMethod.POST, true, admin::checkpoint));
        this.append = data::append;
        this.read = data::read;
    }

    private final Consumer<Exchange> append;
    private final Consumer<Exchange> read;

    /** Requests received and not yet answered. */
    public int inFlight() {
        return inFlight.get();
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
        ctx.channel().config().setAutoRead(false); // the next request is read once this one is answered
        inFlight.incrementAndGet();
        Exchange ex = new Exchange(ctx, request, () -> {
            inFlight.decrementAndGet();
            ctx.channel().config().setAutoRead(true);
            ctx.read();
        });
        if (!request.decoderResult().isSuccess()) {
            ex.closeAfterAnswer();
            ex.error(HttpResponseStatus.BAD_REQUEST, "bad_request", "malformed HTTP request: " + request.decoderResult().cause());
            return;
        }
        try {
            route(ex, request);
        } catch (IllegalArgumentException e) {
            ex.error(HttpResponseStatus.BAD_REQUEST, "bad_parameter", e.getMessage());
        } catch (RuntimeException e) {
            ApiErrors.answer(ex, e);
        }
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
        if (route.protectedByToken() && token != null && !authorized(request)) {
            ex.error(HttpResponseStatus.UNAUTHORIZED, "unauthorized", "send Authorization: Bearer <token>");
            return;
        }
        handler.accept(ex);
    }

    private static void methodNotAllowed(Exchange ex, String allowed) {
        ex.error(HttpResponseStatus.METHOD_NOT_ALLOWED, "method_not_allowed",
                ex.request().method() + " is not allowed on " + ex.path() + "; use " + allowed);
    }

    private boolean authorized(FullHttpRequest request) {
        String header = request.headers().get(HttpHeaderNames.AUTHORIZATION);
        return header != null && MessageDigest.isEqual(token, header.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            ctx.close(); // an idle or stalled client does not keep a connection forever
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.debug("Closing HTTP connection from {}: {}", ctx.channel().remoteAddress(), cause.toString());
        ctx.close();
    }
}
