package io.walden.server.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.walden.server.logging.Units;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/**
 * Checks a request before its body is buffered: a request that lacks the bearer token where its route requires one
 * ({@link Routes}: every route not declared read-only, and any request no route matches), or
 * whose body is over its path's limit, is replaced by a {@link Refusal} that travels down the pipeline in its place
 * (so it is answered in order, after the requests before it), and everything after it on the connection is
 * discarded as it arrives (the connection closes after the refusal's answer). So an unauthenticated client cannot
 * make the server hold large bodies.
 *
 * <p>Only appends carry large bodies: they may send up to {@code max-batch-bytes}; every other path takes at most
 * {@link #SMALL_BODY} bytes. A declared Content-Length is checked from the head; a chunked body is counted as its
 * chunks arrive and refused the moment it passes the limit.
 *
 * <p>One instance per connection (it remembers that it refused, and the current request's budget).
 */
public final class RequestGate extends ChannelInboundHandlerAdapter {
    /** The body limit of every request that is not an append: enough for a policy or a small JSON document. */
    public static final int SMALL_BODY = 4096;

    /** Stands for a refused request; answered by the handler in the request's turn. */
    record Refusal(FullHttpRequest request, HttpResponseStatus status, String error, String detail) {
    }

    private final Routes routes;
    private final byte[] expected;
    private final long maxAppendBody;
    private boolean refused;
    /** The request whose body is arriving (null between requests), and how many more body bytes it may send. */
    private HttpRequest current;
    private long budget;

    /**
     * @param routes which requests need the token and which may carry records ({@link Routes})
     */
    public RequestGate(Routes routes, String authToken, long maxAppendBody) {
        this.routes = routes;
        this.expected = authToken == null ? null : ("Bearer " + authToken).getBytes(StandardCharsets.UTF_8);
        this.maxAppendBody = maxAppendBody;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (refused) {
            ReferenceCountUtil.release(msg); // after a refusal the connection only waits to be closed
            return;
        }
        if (msg instanceof HttpRequest head) {
            String refusal = refusal(head);
            if (refusal != null) {
                refuse(ctx, msg, head, refusal);
                return;
            }
            current = head;
            budget = limitFor(head);
        }
        if (msg instanceof HttpContent content && current != null) {
            budget -= content.content().readableBytes();
            if (budget < 0) {
                refuse(ctx, msg, current, tooLarge(current, "a chunked body"));
                return;
            }
        }
        if (msg instanceof LastHttpContent) {
            current = null;
        }
        ctx.fireChannelRead(msg);
    }

    private void refuse(ChannelHandlerContext ctx, Object msg, HttpRequest head, String refusal) {
        refused = true;
        boolean tooLarge = refusal.startsWith("payload");
        var stand = new DefaultFullHttpRequest(head.protocolVersion(), head.method(), head.uri());
        ReferenceCountUtil.release(msg);
        ctx.fireChannelRead(new Refusal(stand, tooLarge ? HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE
                : HttpResponseStatus.UNAUTHORIZED, tooLarge ? "payload_too_large" : "unauthorized", refusal));
    }

    private long limitFor(HttpRequest head) {
        Route route = routes.find(head.method(), pathOf(head.uri()));
        return route != null && route.body() == Route.Body.RECORDS ? maxAppendBody : SMALL_BODY;
    }

    private String tooLarge(HttpRequest head, String what) {
        long limit = limitFor(head);
        return "payload of " + what + " exceeds the request limit of " + Units.size(limit)
                + (limit == maxAppendBody ? " (max-batch-bytes)" : " for " + head.method() + " "
                + pathOf(head.uri())) + "; nothing was written";
    }

    /** The path of a request target (what precedes its query): no decoding, no copy when there is no query. */
    static String pathOf(String uri) {
        int q = uri.indexOf('?');
        return q < 0 ? uri : uri.substring(0, q);
    }

    private String refusal(HttpRequest head) {
        if (!head.decoderResult().isSuccess()) {
            return null; // the handler answers malformed requests
        }
        String path = pathOf(head.uri());
        if (expected != null && routes.needsToken(head.method(), path)) {
            String header = head.headers().get(HttpHeaderNames.AUTHORIZATION);
            if (header == null || !MessageDigest.isEqual(expected, header.getBytes(StandardCharsets.UTF_8))) {
                return "send Authorization: Bearer <token>";
            }
        }
        long length = HttpUtil.getContentLength(head, -1L);
        if (length > limitFor(head)) {
            return tooLarge(head, length + " bytes");
        }
        return null;
    }
}
