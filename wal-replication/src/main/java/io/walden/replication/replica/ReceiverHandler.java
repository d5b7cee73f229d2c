package io.walden.replication.replica;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.walden.core.Epoch;
import io.walden.core.EpochHistory;
import io.walden.core.Lsn;
import io.walden.replication.protocol.Frame;
import io.walden.replication.protocol.FrameDecoder;
import io.walden.replication.protocol.FrameDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
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
            long end = session.wal.insertLsn();
            Epoch epoch = session.wal.status().history().at(end);
            ctx.writeAndFlush(new Frame.Hello(FrameDescriptor.PROTOCOL_VERSION, session.wal.status().logId(), epoch.number(),
                    epoch.startLsn(), end, session.name, session.secret));
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
                    rewindIfNeeded(welcome.history());
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
                session.status(ctx.channel()); // where this replica stands, so the primary knows at once
                session.primaryFlushed(ctx.channel(), welcome.flushedLsn());
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
                            session.primaryFlushed(ctx.channel(), data.flushedLsn());
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
                    session.primaryFlushed(ctx.channel(), keepalive.flushedLsn());
                }
                if (keepalive.replyRequested()) {
                    session.status(ctx.channel());
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

    /**
     * When the primary's history ends this log's epoch below this log's end, removes what lies beyond (the primary
     * never had it: docs/replication.md, "Shipping before the flush"), durably, before adopting that history. The
     * primary closes the connection after such a welcome; the next hello starts where the rewind left the log.
     *
     * @throws IllegalStateException when the application's applier already took records beyond that point (the
     *                               replica must be rebuilt: the application's state holds what the primary lacks)
     */
    private void rewindIfNeeded(EpochHistory primaryHistory) {
        long end = session.wal.insertLsn();
        Epoch own = session.wal.status().history().at(end);
        long to = primaryHistory.find(own.number()) == null
                ? primaryHistory.rewindPointPastUnknownEpochs(session.wal.status().history(), end) // a lost rival's epoch
                : primaryHistory.rewindPoint(own, end);
        if (to < 0) {
            return;
        }
        session.applier.checkRewind(to);
        long removed = session.wal.replication().rewindTo(to);
        session.rewinds++;
        LOG.warn("Rewound this replica from {} to {} ({} bytes): the primary's history ends its epoch there",
                Lsn.format(end), Lsn.format(to), removed);
        session.applier.rewound(to);
    }

    private void refuseToFollow(ChannelHandlerContext ctx, String why) {
        session.fatal = why;
        LOG.error("Refusing to follow the primary at {}: {}", session.primary, why);
        ctx.close();
    }

    /**
     * Writes one frame's bytes through the write stage and reports them written; when the stage forced them (no
     * further frame queued, or its bounds reached), reports them flushed as well.
     */
    private void apply(ChannelHandlerContext ctx, long start, ByteBuf bytes, int length) {
        try {
            ByteBuffer view = bytes.nioBufferCount() == 1
                    ? bytes.nioBuffer()
                    : ByteBuffer.wrap(ByteBufUtil.getBytes(bytes)); // a frame split over buffers: copied once
            long end = session.writes.write(start, view);
            ctx.writeAndFlush(new Frame.Status(end, session.wal.flushedLsn(), session.applier.applied(), ReplicaSession.now(), false));
            if (session.writes.flushIfDue(pending.get() > length)) {
                session.status(ctx.channel());
            }
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
