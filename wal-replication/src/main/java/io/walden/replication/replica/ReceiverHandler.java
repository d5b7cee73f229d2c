package io.walden.replication.replica;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.walden.core.Lsn;
import io.walden.replication.protocol.Frame;
import io.walden.replication.protocol.FrameDecoder;
import io.walden.replication.protocol.FrameDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One connection to the primary, the replica's side of the protocol (docs/replication-protocol.md): the hello, the
 * welcome (a rewind and the primary's history, before any byte of it is applied), then data frames written in order
 * on the receiver thread and forced when the session's {@link io.walden.core.replication.WriteStage} says,
 * keepalives, and errors (final ones stop the replica). Backpressure: reading stops while more than
 * {@value #MAX_PENDING_BYTES} bytes wait for the receiver thread. A data frame's bytes are not copied: the frame's
 * slice of the received buffer is retained until the receiver thread has written it.
 *
 * <p>Thread-safety: Netty's event loop calls the handler; everything that touches the log runs on the receiver thread.
 */
final class ReceiverHandler extends SimpleChannelInboundHandler<Frame> {
    private static final Logger LOG = LoggerFactory.getLogger(ReceiverHandler.class);
    /** A primary sends a keepalive at least every few seconds when idle: silence this long means it is gone. */
    static final int IDLE_SECONDS = 30;
    /** A primary that accepted the connection but has not welcomed this replica by then is given up on (retried). */
    private static final int HANDSHAKE_SECONDS = 30;
    /** Received but not yet applied bytes above which the replica stops reading (backpressure to the primary). */
    private static final long MAX_PENDING_BYTES = 16L << 20;

    private final ReplicaSession session;
    private final FrameDecoder decoder;
    private final AtomicLong pending = new AtomicLong();
    /** Set on the receiver thread once the primary's history is adopted; data is applied only then. */
    private boolean accepted;

    ReceiverHandler(ReplicaSession session, FrameDecoder decoder) {
        this.session = session;
        this.decoder = decoder;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        session.channel = ctx.channel();
        ctx.executor().schedule(() -> {
            if (ctx.channel().isActive() && session.streamingChannel != ctx.channel()) {
                session.lastError = "the primary at " + session.primary + " did not welcome this replica within " + HANDSHAKE_SECONDS + " s";
                LOG.warn("{}; reconnecting", session.lastError);
                ctx.close();
            }
        }, HANDSHAKE_SECONDS, TimeUnit.SECONDS);
        // On the receiver: after what an earlier connection left queued, so the start is this log's real end.
        session.receiver.execute(() -> {
            Frame.Start start = session.start();
            ctx.writeAndFlush(new Frame.Hello(FrameDescriptor.PROTOCOL_VERSION, start.logId(), start.epoch(),
                    start.epochStartLsn(), start.startLsn(), session.name, session.secret));
        });
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            LOG.warn("Nothing from the primary at {} for {} s; reconnecting", session.primary, IDLE_SECONDS);
            ctx.close();
        }
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
        if (frame instanceof Frame.Welcome welcome) {
            if (welcome.logId() != session.wal.status().logId() || welcome.segmentSize() != session.wal.config().segmentSize()) {
                refuseToFollow(ctx, "the primary's log " + Long.toHexString(welcome.logId()) + " (segments of "
                        + welcome.segmentSize() + " bytes) is not this replica's " + Long.toHexString(session.wal.status().logId()));
                return;
            }
            session.welcomed.run();
            decoder.maxFrameLength(FrameDescriptor.dataFrameLimit(welcome.segmentSize())); // a record never spans segments
            session.receiver.execute(() -> {
                try {
                    session.rewindIfNeeded(welcome.history());
                    session.wal.replication().adoptHistory(welcome.history()); // durably, before any byte of it is applied
                } catch (RuntimeException e) {
                    refuseToFollow(ctx, e.getMessage() + "; rebuild this replica from the primary");
                    return;
                }
                accepted = true;
                session.streamingChannel = ctx.channel();
                session.lastError = null;
                LOG.info("Streaming from the primary at {} from {} in epoch {} (its flushed end {})", session.primary,
                        Lsn.format(session.wal.insertLsn()), welcome.epoch(), Lsn.format(welcome.flushedLsn()));
                session.status(ctx.channel()::writeAndFlush); // where this replica stands, so the primary knows at once
                session.primaryFlushed(ctx.channel()::writeAndFlush, welcome.flushedLsn());
            });
        } else if (frame instanceof Frame.Data data) {
            int length = data.bytes().readableBytes();
            if (pending.addAndGet(length) > MAX_PENDING_BYTES) {
                ctx.channel().config().setAutoRead(false); // the receiver is behind: let TCP push back on the primary
            }
            data.retain(); // SimpleChannelInboundHandler releases it on return; the receiver thread releases this one
            try {
                session.receiver.execute(() -> {
                    try {
                        // Frames received before a connection broke are still applied: they are contiguous, and
                        // the next hello is queued after them, so it starts at their end.
                        if (accepted && !session.dropping) {
                            apply(ctx, data.startLsn(), data.bytes(), length);
                            session.primaryFlushed(ctx.channel()::writeAndFlush, data.flushedLsn());
                        }
                    } finally {
                        data.release();
                        if (pending.addAndGet(-length) <= MAX_PENDING_BYTES / 2 && !ctx.channel().config().isAutoRead()) {
                            ctx.channel().config().setAutoRead(true);
                        }
                    }
                });
            } catch (RejectedExecutionException e) { // the client is closing: its receiver takes nothing more
                data.release();
                pending.addAndGet(-length);
            }
        } else if (frame instanceof Frame.Keepalive keepalive) {
            session.receiver.execute(() -> {
                if (accepted && !session.dropping) {
                    session.primaryFlushed(ctx.channel()::writeAndFlush, keepalive.flushedLsn());
                }
                if (keepalive.replyRequested()) {
                    session.status(ctx.channel()::writeAndFlush);
                }
            });
        } else if (frame instanceof Frame.Archived archived) {
            session.receiver.execute(() -> { // after the Welcome's adoption and rewind, which it follows
                if (accepted && !session.dropping) {
                    session.wal.replication().primaryArchived(archived.floorLsn());
                }
            });
        } else if (frame instanceof Frame.Error error) {
            if (error.code() == Frame.Error.LSN_REMOVED && session.catchUp != null) {
                session.lastError = error.message();
                LOG.warn("The primary at {} no longer keeps this replica's end: {}; fetching it from the archive {}",
                        session.primary, error.message(), session.archive.uri());
                session.receiver.execute(() -> session.fetchFromArchive(error.message())); // before the next hello, which follows it
                ctx.close();
                return;
            }
            if (error.isFinal()) {
                session.fatal = error.message();
            }
            session.lastError = error.message();
            LOG.error("The primary at {} refused this replica: {}", session.primary, error.message());
            ctx.close();
        }
    }

    private void refuseToFollow(ChannelHandlerContext ctx, String why) {
        session.fatal = why;
        LOG.error("Refusing to follow the primary at {}: {}", session.primary, why);
        ctx.close();
    }

    /** Writes one frame's bytes (see {@link ReplicaSession#apply}); a failure ends the connection, and the next hello resumes. */
    private void apply(ChannelHandlerContext ctx, long start, ByteBuf bytes, int length) {
        try {
            session.apply(ctx.channel()::writeAndFlush, start, bytes, pending.get() > length);
        } catch (RuntimeException | Error e) {
            accepted = false; // the rest of this connection's frames cannot follow; the next hello resumes
            LOG.error("Could not apply replicated bytes at {}: {}; reconnecting", Lsn.format(start), e.toString());
            ctx.close();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable root = cause;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        session.lastError = root.getClass().getSimpleName() + ": " + root.getMessage();
        LOG.warn("Connection to the primary at {} failed: {}", session.primary, session.lastError);
        ctx.fireExceptionCaught(cause);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        session.channel = null;
        session.disconnected.run();
    }
}
