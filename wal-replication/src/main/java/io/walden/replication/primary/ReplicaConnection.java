package io.walden.replication.primary;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.walden.replication.protocol.Frame;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * One replica's connection to a primary (docs/replication-protocol.md). Its first frame decides what it carries: a
 * version 5 hello, the root log ({@code default}) alone, as one {@link LogStream} whose stream is the connection; or a
 * version 6 hello, every log of the primary, numbered by a catalog ({@link StoreStreams}).
 *
 * <p>Thread-safety: Netty calls it on the connection's event loop only; the senders run on the endpoint's sender threads.
 */
final class ReplicaConnection extends SimpleChannelInboundHandler<Frame> {
    /** The endpoint's logger, as before the split: log filters and alerts name it. */
    private static final Logger LOG = LoggerFactory.getLogger(ReplicationServer.class);

    /**
     * What every connection of one endpoint shares.
     *
     * @param connected the names of the replicas connected over version 6
     */
    record Endpoint(PrimaryLogs logs, LogStream.Settings settings, Set<String> connected) {
    }

    private final Endpoint endpoint;
    /** The root log's stream of a version 5 connection. */
    private LogStream stream;
    /** The logs of a version 6 connection. */
    private StoreStreams store;
    private String storeName;

    ReplicaConnection(Endpoint endpoint) {
        this.endpoint = endpoint;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        // A peer that connects and says nothing (or stalls its TLS handshake) does not hold a connection for good.
        long timeout = endpoint.settings().handshakeTimeoutMillis();
        ctx.executor().schedule(() -> {
            if (!accepted() && ctx.channel().isActive()) {
                refuse(ctx, Frame.Error.MALFORMED, "no hello within " + timeout + " ms");
            }
        }, timeout, TimeUnit.MILLISECONDS);
        ctx.fireChannelActive();
    }

    private boolean accepted() {
        return stream != null && stream.accepted() || store != null;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
        if (frame instanceof Frame.Hello hello) {
            if (stream != null || store != null) {
                refuse(ctx, Frame.Error.MALFORMED, "a second hello on one connection");
                return;
            }
            stream = new LogStream(endpoint.logs().root(), endpoint.settings(), Link.of(ctx.channel()));
            stream.open(hello, Long.MAX_VALUE);
            if (stream.accepted() && endpoint.logs().hasNamedLogs()) {
                LOG.warn("Replica '{}' speaks protocol version {}: it follows the log default only, not this primary's "
                        + "named logs (upgrade it)", hello.name(), hello.version());
            }
        } else if (frame instanceof Frame.StoreHello hello) {
            onStoreHello(ctx, hello);
        } else if (frame instanceof Frame.Status status && stream != null && stream.accepted()) {
            stream.status(status);
        } else if (frame instanceof Frame.OnLog onLog && store != null) {
            String error = store.onFrame(onLog);
            if (error != null) {
                refuse(ctx, Frame.Error.MALFORMED, error);
            }
        } else {
            refuse(ctx, Frame.Error.MALFORMED, "unexpected " + frame.getClass().getSimpleName() + " frame");
        }
    }

    private void onStoreHello(ChannelHandlerContext ctx, Frame.StoreHello hello) {
        if (stream != null || store != null) {
            refuse(ctx, Frame.Error.MALFORMED, "a second hello on one connection");
            return;
        }
        LogEndpoint root = endpoint.logs().root();
        HandshakeCheck.Answer answer = HandshakeCheck.answerStore(hello, endpoint.settings().secret(), endpoint.connected(),
                root.slots.has(hello.name()), root.slots.size(), endpoint.settings().maxReplicas());
        if (answer instanceof HandshakeCheck.Refuse r) {
            refuse(ctx, r.code(), r.message());
        } else if (!endpoint.connected().add(hello.name())) {
            refuse(ctx, Frame.Error.MALFORMED, "a replica named '" + hello.name() + "' is already connected");
        } else {
            storeName = hello.name();
            store = new StoreStreams(ctx.channel(), endpoint.logs(), endpoint.settings(), hello.name(), hello.secret());
            store.begin();
        }
    }

    private void refuse(ChannelHandlerContext ctx, int code, String message) {
        LOG.warn("Refusing replica connection from {}: {}", ctx.channel().remoteAddress(), message);
        ctx.writeAndFlush(new Frame.Error(code, message)).addListener(ChannelFutureListener.CLOSE);
    }

    /** The replica read what was queued: a sender held back by a full outbound buffer goes on at once. */
    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            if (stream != null) {
                stream.writable();
            }
            if (store != null) {
                store.writable();
            }
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            LOG.warn("Replica {} sent nothing for too long; dropping it", storeName != null ? storeName : ctx.channel().remoteAddress());
            ctx.close();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (stream != null) {
            stream.close();
        }
        if (store != null) {
            store.close();
            endpoint.connected().remove(storeName);
            LOG.info("Replica '{}' disconnected", storeName);
        }
    }
}
