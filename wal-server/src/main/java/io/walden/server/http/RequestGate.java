package io.walden.server.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.walden.server.auth.Grant;
import io.walden.server.logging.Units;

/**
 * Checks a request before its body is buffered: a request whose token may not call its route ({@link TokenCheck}: no
 * token, an unknown one, or one whose role or log patterns do not allow it), or
 * whose body is over its path's limit, is replaced by a {@link Refusal} that travels down the pipeline in its place
 * (so it is answered in order, after the requests before it), and everything after it on the connection is
 * discarded as it arrives (the connection closes after the refusal's answer). So an unauthenticated client cannot
 * make the server hold large bodies.
 *
 * <p>Only appends carry large bodies: they may send up to {@code max-batch-bytes}; every other path takes at most
 * {@link #SMALL_BODY} bytes. A declared Content-Length is checked from the head; a chunked body is counted as its
 * chunks arrive and refused the moment it passes the limit.
 *
 * <p>When tokens are configured, each request that goes on is preceded down the pipeline by its {@link Grant} (the
 * aggregator passes it through, ahead of the request it belongs to), which the connection gives the request's exchange
 * ({@code Exchange.grant()}).
 *
 * <p>One instance per connection (it remembers that it refused, and the current request's budget).
 */
public final class RequestGate extends ChannelInboundHandlerAdapter {
    /** The body limit of every request that is not an append: enough for a policy or a small JSON document. */
    public static final int SMALL_BODY = 4096;

    /** Stands for a refused request; answered by the handler in the request's turn. */
    record Refusal(FullHttpRequest request, HttpResponseStatus status, String error, String detail, String challenge) {
    }

    private final Routes routes;
    /** Null when no token is configured. */
    private final TokenCheck tokens;
    private final long maxAppendBody;
    private boolean refused;
    /** The request whose body is arriving (null between requests), and how many more body bytes it may send. */
    private HttpRequest current;
    private long budget;

    /**
     * @param routes which role each request needs and which may carry records ({@link Routes})
     * @param access the tokens (none: every request goes on) and the counters of refusals
     */
    public RequestGate(Routes routes, Access access, long maxAppendBody) {
        this.routes = routes;
        this.tokens = access.tokens() == null ? null : new TokenCheck(routes, access);
        this.maxAppendBody = maxAppendBody;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (refused) {
            ReferenceCountUtil.release(msg); // after a refusal the connection only waits to be closed
            return;
        }
        if (msg instanceof HttpRequest head) {
            if (refuse(ctx, msg, head)) {
                return;
            }
            if (tokens != null) {
                // Ahead of its request (class comment); a malformed one is answered 400 and may do nothing.
                ctx.fireChannelRead(head.decoderResult().isSuccess() ? tokens.grant() : Grant.NONE);
            }
            current = head;
            budget = limitFor(head);
        }
        if (msg instanceof HttpContent content && current != null) {
            budget -= content.content().readableBytes();
            if (budget < 0) {
                refuse(ctx, msg, current, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "payload_too_large",
                        tooLarge(current, "a chunked body"), null);
                return;
            }
        }
        if (msg instanceof LastHttpContent) {
            current = null;
        }
        ctx.fireChannelRead(msg);
    }

    /** Refuses the request of {@code head} when its token or its declared size says so; true when it did. */
    private boolean refuse(ChannelHandlerContext ctx, Object msg, HttpRequest head) {
        if (!head.decoderResult().isSuccess()) {
            return false; // the handler answers malformed requests
        }
        String path = pathOf(head.uri());
        TokenCheck.Denial denial = tokens == null ? null : tokens.check(head, path);
        if (denial != null) {
            refuse(ctx, msg, head, denial.status(), denial.error(), denial.detail(), denial.challenge());
            return true;
        }
        long length = HttpUtil.getContentLength(head, -1L);
        if (length > limitFor(head)) {
            refuse(ctx, msg, head, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "payload_too_large",
                    tooLarge(head, length + " bytes"), null);
            return true;
        }
        return false;
    }

    private void refuse(ChannelHandlerContext ctx, Object msg, HttpRequest head, HttpResponseStatus status, String error,
                        String detail, String challenge) {
        refused = true;
        var stand = new DefaultFullHttpRequest(head.protocolVersion(), head.method(), head.uri());
        ReferenceCountUtil.release(msg);
        ctx.fireChannelRead(new Refusal(stand, status, error, detail, challenge));
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
}
