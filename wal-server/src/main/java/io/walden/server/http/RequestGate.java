package io.walden.server.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.ReferenceCountUtil;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Set;

/**
 * Checks a request's head before its body is buffered: a request that lacks the bearer token where one is
 * required, or declares a body over the limit, is answered (JSON, then the connection closes) and its body
 * is discarded as it arrives. So an unauthenticated client cannot make the server hold large bodies.
 *
 * <p>One instance per connection (it remembers whether it is discarding a refused request's body).
 */
public final class RequestGate extends ChannelInboundHandlerAdapter {
    /** Paths that need the token when one is configured (the data API and mutating admin calls). */
    static final Set<String> PROTECTED = Set.of("/v1/records", "/v1/records/batch", "/v1/records/stream", "/admin/checkpoint");

    private final byte[] expected;
    private final long maxBody;
    private boolean discarding;

    public RequestGate(String authToken, long maxBody) {
        this.expected = authToken == null ? null : ("Bearer " + authToken).getBytes(StandardCharsets.UTF_8);
        this.maxBody = maxBody;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest) {
            HttpRequest head = (HttpRequest) msg;
            String refusal = refusal(head);
            if (refusal != null) {
                discarding = true;
                boolean tooLarge = refusal.startsWith("payload");
                reject(ctx, tooLarge ? HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE : HttpResponseStatus.UNAUTHORIZED,
                        tooLarge ? "payload_too_large" : "unauthorized", refusal);
                ReferenceCountUtil.release(msg);
                return;
            }
            discarding = false;
        } else if (msg instanceof HttpContent && discarding) {
            ReferenceCountUtil.release(msg);
            return;
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

    private static void reject(ChannelHandlerContext ctx, HttpResponseStatus status, String error, String detail) {
        byte[] body;
        try {
            body = Exchange.JSON.writeValueAsBytes(java.util.Map.of("error", error, "detail", detail));
        } catch (Exception e) {
            body = ("{\"error\":\"" + error + "\"}").getBytes(StandardCharsets.UTF_8);
        }
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(body));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json");
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }
}
