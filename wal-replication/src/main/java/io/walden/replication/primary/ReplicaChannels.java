package io.walden.replication.primary;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerAdapter;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.walden.replication.transport.EventLoops;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A replication endpoint's channels on its {@link EventLoops}: the listening one and each replica's connection.
 * {@link #close()} closes them all and waits until each connection's pipeline has seen its end (channelInactive, so
 * that its sender is stopped and it left the replica map), which a shared group, unlike one of the endpoint's own
 * shut down, would not wait for; then it shuts the group down if the endpoint owns it.
 *
 * <p>Thread-safety: {@link #bind} once, then {@link #close()} from any thread but an event loop of the group (it
 * waits for them, at most {@value #CLOSE_SECONDS} s).
 */
final class ReplicaChannels {
    private static final long CLOSE_SECONDS = 2;

    private final EventLoops loops;
    /** The open connections, each known by the handler that sees its pipeline torn down. */
    private final Set<Tracker> connections = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    private Channel listener;

    ReplicaChannels(EventLoops loops) {
        this.loops = loops;
    }

    /**
     * Binds {@code address}; each accepted connection's pipeline is made by {@code pipeline}. On failure the group is
     * shut down if owned (as the endpoint never started).
     */
    void bind(InetSocketAddress address, Consumer<SocketChannel> pipeline) throws InterruptedException {
        try {
            listener = loops.serverBootstrap().childHandler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    Tracker tracker = new Tracker(ch);
                    ch.pipeline().addLast(tracker); // first: of the handlers it is removed last, after every one saw the end
                    connections.add(tracker);
                    // Accepted before close() and registered after it took its list (on another loop of a shared
                    // group): it must not serve. Set before the list is taken, so either it is listed or this sees it.
                    if (closed) {
                        ch.close();
                        return;
                    }
                    pipeline.accept(ch);
                }
            }).bind(address).sync().channel();
        } catch (Exception e) {
            loops.shutdownIfOwned(1);
            if (e instanceof RuntimeException || e instanceof InterruptedException) {
                throw e;
            }
            // sync() rethrows a failed bind's checked BindException (or epoll's) as it is: callers that catch runtime
            // exceptions to clean up would let it pass. Named here, unchecked.
            throw new IllegalStateException("cannot listen for replicas on " + address + ": " + e, e);
        }
    }

    /** Where the listening channel is bound. */
    InetSocketAddress address() {
        return (InetSocketAddress) listener.localAddress();
    }

    /** The group, for the endpoint's own timers. */
    EventLoopGroup group() {
        return loops.group();
    }

    /**
     * Stops accepting, closes every connection and waits (at most {@value #CLOSE_SECONDS} s) until their handlers
     * have seen them close; shuts the group down when owned. Idempotent only through the endpoint's own guard.
     */
    void close() {
        closed = true;
        listener.close().awaitUninterruptibly();
        List<Tracker> open = List.copyOf(connections);
        for (Tracker t : open) {
            t.channel.close();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(CLOSE_SECONDS);
        for (Tracker t : open) {
            try {
                t.removed.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        loops.shutdownIfOwned(CLOSE_SECONDS).awaitUninterruptibly();
    }

    /** Counts a connection down once its pipeline is torn down, which follows channelInactive through every handler. */
    private final class Tracker extends ChannelHandlerAdapter {
        private final CountDownLatch removed = new CountDownLatch(1);
        private final Channel channel;

        Tracker(Channel channel) {
            this.channel = channel;
        }

        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) {
            connections.remove(this);
            removed.countDown();
        }
    }
}
