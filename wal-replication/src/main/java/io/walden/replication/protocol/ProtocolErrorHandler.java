package io.walden.replication.protocol;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last handler of a replication pipeline: a malformed frame, or any failure, is logged with its reason,
 * answered with an {@link Frame.Error} when possible, and the connection is closed. It never crashes or
 * stalls the peer's other connections. Stateless: one instance may serve every channel.
 */
@ChannelHandler.Sharable
public final class ProtocolErrorHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(ProtocolErrorHandler.class);

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        boolean malformed = cause instanceof DecoderException || cause instanceof TooLongFrameException;
        String reason = cause.getCause() != null && cause instanceof DecoderException && cause.getMessage() == null
                ? cause.getCause().toString() : String.valueOf(cause.getMessage());
        LOG.warn("Closing replication connection from {}: {}{}", ctx.channel().remoteAddress(),
                malformed ? "malformed frame: " : "", reason);
        if (ctx.channel().isActive()) {
            ctx.writeAndFlush(new Frame.Error(malformed ? Frame.Error.MALFORMED : 0, reason))
                    .addListener(ChannelFutureListener.CLOSE);
        }
    }
}
