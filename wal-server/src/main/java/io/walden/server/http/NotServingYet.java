package io.walden.server.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;

import java.nio.charset.StandardCharsets;

/**
 * The whole HTTP API of a server whose log is open but that cannot answer for its logs yet: a cluster's server while
 * it joins (docs/cluster.md, "A server that restarts"). Joining can take a ZooKeeper session timeout and more (Helix
 * waits for the session of the server's previous life to expire), and a client that reached the port would otherwise
 * wait in the listen backlog that long, with no word of why. So each request is answered at once with 503 and
 * {@code {"error": code, "detail": ...}}, {@code Retry-After: 1}, and the connection closes (lingering, as
 * {@link LingeringClose} says why): the client's next connection reaches the real API once the server serves.
 *
 * <p>Nothing a request asks is done: no record is written, none read. {@code /health} and {@code /ready} are answered
 * 503 too: a load balancer should not send work here yet.
 *
 * <p>Shared by every connection accepted before the server serves; placed after the HTTP codec. Stateless.
 */
@ChannelHandler.Sharable
public final class NotServingYet extends ChannelInboundHandlerAdapter {
    private final byte[] body;

    /** Answers {@code error} with {@code detail} (a sentence saying why and what to do). */
    public NotServingYet(String error, String detail) {
        this.body = ("{\"error\":\"" + error + "\",\"detail\":\"" + detail.replace("\"", "'") + "\"}")
                .getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        boolean head = msg instanceof HttpRequest;
        ReferenceCountUtil.release(msg); // a body's chunks, or what follows the one request answered, are dropped
        if (!head || !ctx.channel().isActive()) { // a request pipelined behind the answered one is not answered
            return;
        }
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                HttpResponseStatus.SERVICE_UNAVAILABLE, Unpooled.wrappedBuffer(body));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json")
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length)
                .setInt(HttpHeaderNames.RETRY_AFTER, 1)
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        LingeringClose.after(ctx.writeAndFlush(response));
    }
}
