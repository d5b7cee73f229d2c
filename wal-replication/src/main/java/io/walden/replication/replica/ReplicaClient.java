package io.walden.replication.replica;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.replication.protocol.Frame;
import io.walden.replication.protocol.FrameDecoder;
import io.walden.replication.protocol.FrameDescriptor;
import io.walden.replication.protocol.FrameEncoder;
import io.walden.replication.protocol.ProtocolErrorHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A replica's receiver (minimal: plaintext, no promotion yet): connects to the primary, asks to stream from
 * its own end, applies what arrives byte for byte ({@link Wal#applyReplicated}), flushes it through its own
 * group commit, and reports written, flushed and applied positions after each batch and whenever asked.
 * Reconnects with backoff and resumes exactly at its end. While it runs, local appends are refused with an
 * error that names the primary.
 *
 * <p>Threads: a Netty event loop for the connection, one applier thread ({@code walden-receiver}) that
 * writes and flushes. Thread-safety: {@link #close()} from any thread.
 */
public final class ReplicaClient implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaClient.class);
    private static final long MAX_BACKOFF_MILLIS = 2000;
    /** A primary sends a keepalive at least every few seconds when idle: silence this long means it is gone. */
    private static final int IDLE_SECONDS = 30;
    /** Received but not yet applied bytes above which the replica stops reading (backpressure to the primary). */
    private static final long MAX_PENDING_BYTES = 16L << 20;

    private final Wal wal;
    private final InetSocketAddress primary;
    private final String name;
    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final ExecutorService applier = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "walden-receiver");
        t.setDaemon(true);
        return t;
    });
    private final FrameEncoder encoder = new FrameEncoder();
    private volatile boolean running = true;
    private volatile String fatal;
    private volatile Channel channel;
    private long backoffMillis = 50;

    public ReplicaClient(Wal wal, InetSocketAddress primary, String name) {
        this.wal = wal;
        this.primary = primary;
        this.name = name;
        wal.refuseAppends("this log is a replica of the primary at " + primary.getHostString() + ":" + primary.getPort()
                + "; write to the primary");
        connect();
    }

    /** Why the primary refused this replica for good (another log, removed LSN, diverged history), or null. */
    public String fatalError() {
        return fatal;
    }

    public boolean isConnected() {
        Channel c = channel;
        return c != null && c.isActive();
    }

    private void connect() {
        if (!running) {
            return;
        }
        new Bootstrap().group(group).channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new io.netty.handler.timeout.IdleStateHandler(IDLE_SECONDS, 0, 0),
                                new FrameDecoder(), encoder, new Receiver(), new ProtocolErrorHandler());
                    }
                })
                .connect(primary).addListener(f -> {
                    if (!f.isSuccess()) {
                        retryLater();
                    }
                });
    }

    private void retryLater() {
        if (!running || fatal != null) {
            return;
        }
        long delay = backoffMillis;
        backoffMillis = Math.min(MAX_BACKOFF_MILLIS, backoffMillis * 2);
        group.schedule(this::connect, delay, TimeUnit.MILLISECONDS);
    }

    private final class Receiver extends SimpleChannelInboundHandler<Frame> {
        private final java.util.concurrent.atomic.AtomicLong pending = new java.util.concurrent.atomic.AtomicLong();

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            channel = ctx.channel();
            // From the applier: after what an earlier connection left queued, so the start is this log's real end.
            applier.execute(() -> ctx.writeAndFlush(new Frame.Hello(FrameDescriptor.PROTOCOL_VERSION, wal.logId(), 0,
                    wal.insertLsn(), name, new byte[0])));
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof io.netty.handler.timeout.IdleStateEvent) {
                LOG.warn("Nothing from the primary at {} for {} s; reconnecting", primary, IDLE_SECONDS);
                ctx.close();
            }
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
            if (frame instanceof Frame.Welcome welcome) {
                if (welcome.logId() != wal.logId() || welcome.segmentSize() != wal.config().segmentSize()) {
                    fatal = "the primary's log " + Long.toHexString(welcome.logId()) + " (segments of " + welcome.segmentSize()
                            + " bytes) is not this replica's " + Long.toHexString(wal.logId());
                    LOG.error("Refusing to follow the primary at {}: {}", primary, fatal);
                    ctx.close();
                    return;
                }
                backoffMillis = 50;
                LOG.info("Streaming from the primary at {} from {} (its flushed end {})", primary, Lsn.format(wal.insertLsn()),
                        Lsn.format(welcome.flushedLsn()));
                applier.execute(() -> status(ctx)); // where this replica stands, so the primary knows at once
            } else if (frame instanceof Frame.Data data) {
                long start = data.startLsn();
                byte[] bytes = new byte[data.bytes().readableBytes()];
                data.bytes().getBytes(data.bytes().readerIndex(), bytes);
                if (pending.addAndGet(bytes.length) > MAX_PENDING_BYTES) {
                    ctx.channel().config().setAutoRead(false); // the applier is behind: let TCP push back on the primary
                }
                applier.execute(() -> {
                    try {
                        if (ctx.channel().isActive()) { // frames of a lost connection are dropped: they will be sent again
                            apply(ctx, start, bytes);
                        }
                    } finally {
                        if (pending.addAndGet(-bytes.length) <= MAX_PENDING_BYTES / 2 && !ctx.channel().config().isAutoRead()) {
                            ctx.channel().config().setAutoRead(true);
                        }
                    }
                });
            } else if (frame instanceof Frame.Keepalive keepalive && keepalive.replyRequested()) {
                applier.execute(() -> status(ctx));
            } else if (frame instanceof Frame.Error error) {
                if (error.code() == Frame.Error.ANOTHER_LOG || error.code() == Frame.Error.LSN_REMOVED
                        || error.code() == Frame.Error.EPOCH_DIVERGED || error.code() == Frame.Error.UNSUPPORTED_VERSION) {
                    fatal = error.message();
                }
                LOG.error("The primary refused this replica: {}", error.message());
                ctx.close();
            }
        }

        private void apply(ChannelHandlerContext ctx, long start, byte[] bytes) {
            try {
                long end = wal.applyReplicated(start, ByteBuffer.wrap(bytes));
                ctx.writeAndFlush(new Frame.Status(end, wal.flushedLsn(), wal.flushedLsn(), now(), false));
                wal.flush();
                status(ctx);
            } catch (RuntimeException e) {
                LOG.error("Could not apply replicated bytes at {}: {}; reconnecting", Lsn.format(start), e.getMessage());
                ctx.close();
            }
        }

        private void status(ChannelHandlerContext ctx) {
            long flushed = wal.flushedLsn();
            // Applied = visible to this log's readers that see flushed records.
            ctx.writeAndFlush(new Frame.Status(wal.writtenLsn(), flushed, flushed, now(), false));
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            channel = null;
            retryLater();
        }
    }

    /** What a primary says of itself: what a new replica needs to create its log as a copy of the primary's. */
    public record PrimaryIdentity(long logId, long segmentSize) {
    }

    /**
     * Asks the primary at {@code primary} for its log's identity (a hello as a new copy, log id 0), for a replica
     * whose directory holds no log yet.
     *
     * @throws IllegalStateException when the primary cannot be reached or refuses, with its reason
     */
    public static PrimaryIdentity fetchIdentity(InetSocketAddress primary, String name, long timeoutMillis) throws InterruptedException {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        java.util.concurrent.CompletableFuture<PrimaryIdentity> answer = new java.util.concurrent.CompletableFuture<>();
        try {
            new Bootstrap().group(group).channel(NioSocketChannel.class)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new FrameDecoder(), new FrameEncoder(), new SimpleChannelInboundHandler<Frame>() {
                                @Override
                                public void channelActive(ChannelHandlerContext ctx) {
                                    ctx.writeAndFlush(new Frame.Hello(FrameDescriptor.PROTOCOL_VERSION, 0, 0,
                                            io.walden.core.segment.SegmentHeaderDescriptor.LENGTH, name, new byte[0]));
                                }

                                @Override
                                protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
                                    if (frame instanceof Frame.Welcome w) {
                                        answer.complete(new PrimaryIdentity(w.logId(), w.segmentSize()));
                                    } else if (frame instanceof Frame.Error e) {
                                        answer.completeExceptionally(new IllegalStateException("the primary refused: " + e.message()));
                                    }
                                    ctx.close();
                                }
                            });
                        }
                    })
                    .connect(primary).addListener(f -> {
                        if (!f.isSuccess()) {
                            answer.completeExceptionally(new IllegalStateException("cannot reach the primary at " + primary
                                    + ": " + f.cause().getMessage()));
                        }
                    });
            return answer.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw (IllegalStateException) e.getCause();
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("the primary at " + primary + " did not answer within " + timeoutMillis + " ms");
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    private static long now() {
        return TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
    }

    /** Disconnects and stops reconnecting; the log stays open (the caller owns it) and keeps refusing appends. */
    @Override
    public void close() {
        running = false;
        Channel c = channel;
        if (c != null) {
            c.close().awaitUninterruptibly();
        }
        applier.shutdownNow(); // queued frames are dropped: a later connection resumes from this log's end
        try {
            if (!applier.awaitTermination(30, TimeUnit.SECONDS)) {
                LOG.error("The replica's applier did not stop within 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
    }
}
