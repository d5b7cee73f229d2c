package io.walden.replication.primary;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.walden.core.EpochHistory;
import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.replication.protocol.Frame;
import io.walden.replication.protocol.FrameDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One replica's connection to a primary (docs/replication-protocol.md): the hello, answered as {@link HandshakeCheck}
 * decides; then the replica's status frames, which move its {@link ReplicaState}, its slot and its meters and let the
 * {@link SyncReleaser} release commits; while a {@link Sender} streams the data, woken when the channel drains.
 *
 * <p>Thread-safety: Netty calls it on the connection's event loop only; the sender runs on its own thread.
 */
final class ReplicaConnection extends SimpleChannelInboundHandler<Frame> {
    /** The endpoint's logger, as before the split: log filters and alerts name it. */
    private static final Logger LOG = LoggerFactory.getLogger(ReplicationServer.class);

    /**
     * What every connection of one endpoint shares.
     *
     * @param secret the shared secret a hello must carry, or null when none is required
     */
    record Endpoint(Wal wal, Map<String, ReplicaState> replicas, SlotStore slots, ReplicaMeters meters,
                    SyncReleaser releaser, long keepaliveNanos, boolean shipFlushedOnly, byte[] secret, int maxReplicas,
                    long handshakeTimeoutMillis) {
    }

    private final Endpoint endpoint;
    private final Wal wal;
    private ReplicaState state;
    private Sender sender;

    ReplicaConnection(Endpoint endpoint) {
        this.endpoint = endpoint;
        this.wal = endpoint.wal();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        // A peer that connects and says nothing (or stalls its TLS handshake) does not hold a connection for good.
        long timeout = endpoint.handshakeTimeoutMillis();
        ctx.executor().schedule(() -> {
            if (state == null && ctx.channel().isActive()) {
                refuse(ctx, Frame.Error.MALFORMED, "no hello within " + timeout + " ms");
            }
        }, timeout, TimeUnit.MILLISECONDS);
        ctx.fireChannelActive();
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
        if (frame instanceof Frame.Hello hello) {
            onHello(ctx, hello);
        } else if (frame instanceof Frame.Status status && state != null) {
            if (state.report(status.writtenLsn(), status.flushedLsn(), status.appliedLsn(), System.nanoTime())) {
                LOG.info("Replica '{}' caught up at {}", state.name, Lsn.format(state.flushed));
            }
            endpoint.meters().reported(state);
            endpoint.slots().confirmed(state.name, state.flushed);
            // blocked commits are unparked from here; asynchronous ones complete on the releaser
            endpoint.releaser().release(endpoint.replicas());
        } else {
            refuse(ctx, Frame.Error.MALFORMED, "unexpected " + frame.getClass().getSimpleName() + " frame");
        }
    }

    private void onHello(ChannelHandlerContext ctx, Frame.Hello hello) {
        if (state != null) {
            refuse(ctx, Frame.Error.MALFORMED, "a second hello on one connection");
            return;
        }
        Map<String, ReplicaState> replicas = endpoint.replicas();
        EpochHistory history = wal.status().history();
        HandshakeCheck.Answer answer = HandshakeCheck.answer(hello, new HandshakeCheck.Primary(history, wal.status().logId(),
                wal.oldestLsn(), wal.replication().shippableLsn(!endpoint.shipFlushedOnly()),
                wal.status().appendsRefusedReason() != null, endpoint.secret(), endpoint.slots().has(hello.name()),
                endpoint.slots().size(), replicas.size(), endpoint.maxReplicas()));
        if (answer instanceof HandshakeCheck.Refuse r) {
            refuse(ctx, r.code(), r.message());
        } else if (answer instanceof HandshakeCheck.Identify) {
            ctx.writeAndFlush(welcome(history)).addListener(ChannelFutureListener.CLOSE);
        } else if (answer instanceof HandshakeCheck.Rewind rewind) {
            LOG.info("Replica '{}': {}; it rewinds and reconnects", hello.name(), rewind.why());
            ctx.writeAndFlush(welcome(history)).addListener(ChannelFutureListener.CLOSE);
        } else if (replicas.putIfAbsent(hello.name(), new ReplicaState(hello.name(), wal.flushedLsn(), hello.startLsn())) != null) {
            refuse(ctx, Frame.Error.MALFORMED, "a replica named '" + hello.name() + "' is already connected");
        } else {
            state = replicas.get(hello.name());
            endpoint.slots().connected(hello.name(), hello.startLsn()); // hold its start until it confirms more
            endpoint.meters().connected(state);
            ctx.writeAndFlush(welcome(history));
            sender = new Sender(wal, ctx.channel(), hello.startLsn(), endpoint.keepaliveNanos(), history,
                    !endpoint.shipFlushedOnly(), state::sent);
            sender.start();
            LOG.info("Replica '{}' connected from {} at {} (epoch {})", hello.name(), ctx.channel().remoteAddress(),
                    Lsn.format(hello.startLsn()), hello.epoch());
        }
    }

    private Frame.Welcome welcome(EpochHistory history) {
        long oldest = wal.oldestLsn(); // before the flushed position: it never passes a flushed position read after it
        return new Frame.Welcome(FrameDescriptor.PROTOCOL_VERSION, wal.status().logId(), wal.config().segmentSize(),
                history.current().number(), wal.flushedLsn(), oldest, history);
    }

    private void refuse(ChannelHandlerContext ctx, int code, String message) {
        LOG.warn("Refusing replica connection from {}: {}", ctx.channel().remoteAddress(), message);
        ctx.writeAndFlush(new Frame.Error(code, message)).addListener(ChannelFutureListener.CLOSE);
    }

    /** The replica read what was queued: a sender held back by a full outbound buffer goes on at once. */
    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (sender != null && ctx.channel().isWritable()) {
            sender.writable();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            LOG.warn("Replica {} sent nothing for too long; dropping it", state == null ? ctx.channel().remoteAddress() : state.name);
            ctx.close();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (sender != null) {
            sender.stop();
        }
        if (state != null) {
            endpoint.replicas().remove(state.name, state);
            endpoint.meters().disconnected(state.name); // per-connection meters: they do not pile up with names
            LOG.info("Replica '{}' disconnected", state.name);
        }
    }
}
