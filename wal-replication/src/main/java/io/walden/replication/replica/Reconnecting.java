package io.walden.replication.replica;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.handler.ssl.SslContext;
import io.walden.replication.transport.EventLoops;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A replica's connections to its primary: made on its event loops, again after each failure with a backoff that doubles
 * up to {@value #MAX_BACKOFF_MILLIS} ms and starts again from {@value #FIRST_BACKOFF_MILLIS} ms once a primary accepted
 * it; every connection made is known until it closes, so that {@link #stop} closes them all (on a shared group nothing
 * else would).
 *
 * <p>Thread-safety: every method from any thread; {@link #stop} not from one of the event loops.
 */
final class Reconnecting {
    private static final long FIRST_BACKOFF_MILLIS = 50;
    private static final long MAX_BACKOFF_MILLIS = 2000;

    private final EventLoops loops;
    private final InetSocketAddress primary;
    private final SslContext tls;
    private final Supplier<ChannelHandler[]> handlers;
    private final Consumer<String> failed;
    private final BooleanSupplier mayRetry;
    /** Every connection made and not yet closed. Added to, and read for closing, under its own lock (see connect()). */
    private final Set<Channel> connections = ConcurrentHashMap.newKeySet();
    private volatile boolean running = true;
    private volatile long backoffMillis = FIRST_BACKOFF_MILLIS;

    /**
     * @param handlers each connection's pipeline after TLS
     * @param failed   told why a connection attempt failed
     * @param mayRetry whether to try again (false once the primary refused for good)
     */
    Reconnecting(EventLoops loops, InetSocketAddress primary, SslContext tls, Supplier<ChannelHandler[]> handlers,
                 Consumer<String> failed, BooleanSupplier mayRetry) {
        this.loops = loops;
        this.primary = primary;
        this.tls = tls;
        this.handlers = handlers;
        this.failed = failed;
        this.mayRetry = mayRetry;
    }

    /** Connects once; a failed attempt is retried later. */
    void connect() {
        ChannelFuture connecting;
        // Under the lock, with running checked inside: stop() clears running, then lists the connections under it, so
        // a connection is either listed (and closed) or never made.
        synchronized (connections) {
            if (!running) {
                return;
            }
            connecting = PrimaryConnections.to(loops, primary, tls, handlers).connect(primary);
            Channel c = connecting.channel();
            connections.add(c);
            c.closeFuture().addListener(f -> connections.remove(c));
        }
        connecting.addListener(f -> {
            if (!f.isSuccess()) {
                failed.accept("cannot connect to " + primary + ": " + f.cause().getMessage());
                retryLater();
            }
        });
    }

    /** Connects again after the backoff, unless stopped or refused for good. */
    void retryLater() {
        if (!running || !mayRetry.getAsBoolean()) {
            return;
        }
        long delay = backoffMillis;
        backoffMillis = Math.min(MAX_BACKOFF_MILLIS, delay * 2);
        try {
            loops.group().schedule(this::connect, delay, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // the group is shutting down: nothing connects any more
        }
    }

    /** The primary accepted the connection: the next wait starts from the shortest. */
    void reached() {
        backoffMillis = FIRST_BACKOFF_MILLIS;
    }

    /** Stops connecting and closes every connection made, {@code current} first, waiting for each to close. */
    void stop(Channel current) {
        running = false;
        List<Channel> open;
        synchronized (connections) {
            open = List.copyOf(connections);
        }
        if (current != null) {
            current.close().awaitUninterruptibly();
        }
        for (Channel c : open) { // one still connecting: on a shared group, nothing else would close it
            c.close().awaitUninterruptibly();
        }
    }
}
