package io.walden.replication.replica;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.SslContext;
import io.walden.replication.transport.EventLoops;

import java.net.InetSocketAddress;
import java.util.function.Supplier;

/** The transport to a primary: a client bootstrap, TLS first when configured (checking the primary's host name). */
final class PrimaryConnections {
    private PrimaryConnections() {
    }

    /**
     * A bootstrap on {@code loops} (with its channel class) whose channels get TLS (when {@code tls} is set), then fresh
     * {@code handlers}.
     */
    static Bootstrap to(EventLoops loops, InetSocketAddress primary, SslContext tls, Supplier<ChannelHandler[]> handlers) {
        return loops.bootstrap().handler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                if (tls != null) {
                    ch.pipeline().addLast(tls.newHandler(ch.alloc(), primary.getHostString(), primary.getPort()));
                }
                ch.pipeline().addLast(handlers.get());
            }
        });
    }
}
