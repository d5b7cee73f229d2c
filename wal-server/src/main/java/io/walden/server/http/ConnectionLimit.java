package io.walden.server.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Caps the open HTTP connections ({@code max-connections}): each holds buffers and, for streams, a reader thread,
 * so their number must not grow with whatever a client opens. A connection over the cap is answered at once with
 * 503 {@code too_many_connections} and closed; whatever it sends is dropped unread. Placed right after TLS (whose
 * handshake must run for the answer to be written) and before the HTTP codec.
 *
 * <p>Shared by every connection of a server; the count is updated on each connection's event loop.
 */
@ChannelHandler.Sharable
public final class ConnectionLimit extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionLimit.class);
    private final int max;
    private final AtomicInteger open = new AtomicInteger();
    /** Refused connections waiting (at most a second) for their client to close: at most {@code max} of them. */
    private final AtomicInteger lingering = new AtomicInteger();

    public ConnectionLimit(int max) {
        if (max < 1) {
            throw new IllegalArgumentException("max-connections must be at least 1, got " + max);
        }
        this.max = max;
    }

    /** Connections open now (refused ones excluded). */
    public int open() {
        return open.get();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        if (open.incrementAndGet() > max) {
            open.decrementAndGet();
            ctx.channel().attr(REFUSED).set(Boolean.TRUE);
            LOG.warn("Refusing an HTTP connection from {}: {} connections are open (max-connections)",
                    ctx.channel().remoteAddress(), max);
            byte[] body = ("{\"error\":\"too_many_connections\",\"detail\":\"" + max + " connections are open "
                    + "(max-connections); retry shortly\"}").getBytes(StandardCharsets.UTF_8);
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                    HttpResponseStatus.SERVICE_UNAVAILABLE, Unpooled.wrappedBuffer(body));
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json")
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length)
                    .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            // Through the HTTP encoder; then a half close rather than a close: a request the client already sent is still
            // unread, and closing a socket with unread bytes sends a reset that can destroy the answer before the client
            // reads it (LingeringClose). What arrives is dropped (channelRead) until the client closes, or for at most
            // LingeringClose.LINGER_SECONDS.
            // Under a flood, at most max-connections refused sockets linger; the rest close at once.
            ctx.channel().writeAndFlush(response).addListener((ChannelFutureListener) f -> {
                if (f.channel() instanceof DuplexChannel && f.isSuccess() && lingering.incrementAndGet() <= max) {
                    f.channel().closeFuture().addListener(c -> lingering.decrementAndGet());
                    LingeringClose.linger(f.channel());
                } else {
                    if (f.channel() instanceof DuplexChannel && f.isSuccess()) {
                        lingering.decrementAndGet();
                    }
                    f.channel().close();
                }
            });
            return;
        }
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (ctx.channel().attr(REFUSED).get() != null) {
            ReferenceCountUtil.release(msg); // a refused connection is only waiting to be closed
            return;
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (ctx.channel().attr(REFUSED).get() == null) {
            open.decrementAndGet();
            ctx.fireChannelInactive();
        }
    }

    private static final AttributeKey<Boolean> REFUSED = AttributeKey.valueOf("walden.refused");
}
