package io.walden.server.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.ReferenceCountUtil;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Set;

/**
 * Checks a request's head before its body is buffered: a request that lacks the bearer token where one is
 * required, or declares a body over the limit, is replaced by a {@link Refusal} that travels down the pipeline
 * in its place (so it is answered in order, after the requests before it), and everything after it on the
 * connection is discarded as it arrives (the connection closes after the refusal's answer). So an
 * unauthenticated client cannot make the server hold large bodies.
 *
 * <p>One instance per connection (it remembers that it refused).
 */
public final class RequestGate extends ChannelInboundHandlerAdapter {
    /** Paths that need the token when one is configured (the data API and mutating admin calls). */
    static final Set<String> PROTECTED = Set.of("/v1/records", "/v1/records/batch", "/v1/records/stream", "/admin/checkpoint",
            "/admin/sync-replicas", "/admin/promote");

    /** Stands for a refused request; answered by the handler in the request's turn. */
    record Refusal(io.netty.handler.codec.http.FullHttpRequest request, HttpResponseStatus status, String error, String detail) {
    }

    private final byte[] expected;
    private final long maxBody;
    private boolean refused;

    public RequestGate(String authToken, long maxBody) {
        this.expected = authToken == null ? null : ("Bearer " + authToken).getBytes(StandardCharsets.UTF_8);
        this.maxBody = maxBody;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (refused) {
            ReferenceCountUtil.release(msg); // after a refusal the connection only waits to be closed
            return;
        }
        if (msg instanceof HttpRequest) {
            HttpRequest head = (HttpRequest) msg;
            String refusal = refusal(head);
            if (refusal != null) {
                refused = true;
                boolean tooLarge = refusal.startsWith("payload");
                var stand = new io.netty.handler.codec.http.DefaultFullHttpRequest(head.protocolVersion(), head.method(), head.uri());
                ReferenceCountUtil.release(msg);
                ctx.fireChannelRead(new Refusal(stand, tooLarge ? HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE
                        : HttpResponseStatus.UNAUTHORIZED, tooLarge ? "payload_too_large" : "unauthorized", refusal));
                return;
            }
        }
        ctx.fireChannelRead(msg);
    }

    private String refusal(HttpRequest head) {
        if (!head.decoderResult().isSuccess()) {
            return null; // the handler answers malformed requests
        }
        String path = new QueryStringDecoder(head.uri()).path();
        if (expected != null && PROTECTED.contains(path)) {
            String header = head.headers().get(HttpHeaderNames.AUTHORIZATION);
            if (header == null || !MessageDigest.isEqual(expected, header.getBytes(StandardCharsets.UTF_8))) {
                return "send Authorization: Bearer <token>";
            }
        }
        long length = HttpUtil.getContentLength(head, -1L);
        if (length > maxBody) {
            return "payload of " + length + " bytes exceeds the request limit of " + maxBody + " bytes (max-batch-bytes); nothing was written";
        }
        return null;
    }
}
