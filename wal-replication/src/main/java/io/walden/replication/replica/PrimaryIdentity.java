package io.walden.replication.replica;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.ssl.SslContext;
import io.walden.core.EpochHistory;
import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import io.walden.replication.protocol.Frame;
import io.walden.replication.protocol.FrameDecoder;
import io.walden.replication.protocol.FrameDescriptor;
import io.walden.replication.protocol.FrameEncoder;
import io.walden.replication.transport.EventLoops;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What a primary says of itself: what a new replica needs to create its log as a copy of the primary's
 * (docs/replication-protocol.md, a hello with log id 0).
 *
 * @param oldestLsn the primary's oldest kept record: a new replica's log begins in its segment
 * @param history   the primary's epoch history, which a new replica takes as its own before its first hello
 */
public record PrimaryIdentity(long logId, long segmentSize, long oldestLsn, EpochHistory history) {

    /** Where a new replica's log begins: the start of the segment holding the primary's oldest record. */
    public long baseLsn() {
        return oldestLsn & -segmentSize;
    }

    /** Sets what makes a new log a copy of the primary's: its log id, its segment size and where it begins. */
    public WalConfig.Builder shape(WalConfig.Builder config) {
        return config.logId(logId).segmentSize(segmentSize).baseLsn(baseLsn());
    }

    /**
     * Creates (or opens, if the directory already holds it) a new replica's log as a copy of the primary's: the same
     * log id and segment size, beginning at the segment that holds the primary's oldest record (PostgreSQL's base
     * backup: a primary that truncated no longer has the start), with the primary's epoch history taken before the
     * first hello, so that the hello names the epoch its records belong to.
     *
     * @param config the replica log's settings; its log id, segment size and base LSN are set from this identity
     * @throws io.walden.core.WalException when the log cannot be opened, or an existing log there is of another log
     */
    public Wal openReplicaLog(WalConfig.Builder config) {
        Wal wal = Wal.open(shape(config).build());
        try {
            wal.replication().adoptHistory(history);
            return wal;
        } catch (RuntimeException e) {
            wal.close();
            throw e;
        }
    }

    /**
     * Asks the primary at {@code primary} for its log's identity (a hello as a new copy, log id 0), for a replica
     * whose directory holds no log yet.
     *
     * @param tls    TLS to the primary, or null
     * @param secret the replication secret, or null
     * @throws IllegalStateException when the primary cannot be reached or refuses, with its reason
     */
    public static PrimaryIdentity fetch(InetSocketAddress primary, String name, SslContext tls, String secret,
                                        long timeoutMillis) throws InterruptedException {
        return fetch(primary, name, tls, secret, timeoutMillis, EventLoops.ownNio());
    }

    /**
     * As {@link #fetch(InetSocketAddress, String, SslContext, String, long)}, on {@code loops}: its one connection is
     * closed before this returns or throws, and the group is shut down only if {@code loops} owns it (a shared group
     * keeps running).
     *
     * @param loops the event loops to connect on, e.g. {@link EventLoops#shared}; not one of them calling this
     */
    public static PrimaryIdentity fetch(InetSocketAddress primary, String name, SslContext tls, String secret,
                                        long timeoutMillis, EventLoops loops) throws InterruptedException {
        CompletableFuture<PrimaryIdentity> answer = new CompletableFuture<>();
        byte[] secretBytes = secret == null ? new byte[0] : secret.getBytes(StandardCharsets.UTF_8);
        ChannelFuture connecting = null;
        try {
            connecting = PrimaryConnections.to(loops, primary, tls, () -> new ChannelHandler[] {
                            new FrameDecoder(FrameDescriptor.HANDSHAKE_MAX_FRAME_LENGTH), new FrameEncoder(),
                            new SimpleChannelInboundHandler<Frame>() {
                                @Override
                                public void channelActive(ChannelHandlerContext ctx) {
                                    ctx.writeAndFlush(new Frame.Hello(FrameDescriptor.PROTOCOL_VERSION, 0, 1, 0,
                                            Lsn.FIRST, name, secretBytes));
                                }

                                @Override
                                protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
                                    if (frame instanceof Frame.Welcome w) {
                                        answer.complete(new PrimaryIdentity(w.logId(), w.segmentSize(), w.oldestLsn(), w.history()));
                                    } else if (frame instanceof Frame.Error e) {
                                        answer.completeExceptionally(new IllegalStateException("the primary refused: " + e.message()));
                                    }
                                    ctx.close();
                                }

                                @Override
                                public void channelInactive(ChannelHandlerContext ctx) {
                                    answer.completeExceptionally(new IllegalStateException("the primary at " + primary
                                            + " closed the connection without an answer"));
                                }

                                @Override
                                public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                    answer.completeExceptionally(new IllegalStateException("talking to the primary at "
                                            + primary + " failed: " + cause.getMessage(), cause));
                                    ctx.close();
                                }
                            }})
                    .connect(primary).addListener(f -> {
                        if (!f.isSuccess()) {
                            answer.completeExceptionally(new IllegalStateException("cannot reach the primary at " + primary
                                    + ": " + f.cause().getMessage()));
                        }
                    });
            return answer.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw (IllegalStateException) e.getCause();
        } catch (TimeoutException e) {
            throw new IllegalStateException("the primary at " + primary + " did not answer within " + timeoutMillis + " ms");
        } finally {
            if (connecting != null) {
                connecting.channel().close(); // on a shared group nothing else would, e.g. after a timeout
            }
            loops.shutdownIfOwned(1);
        }
    }
}
