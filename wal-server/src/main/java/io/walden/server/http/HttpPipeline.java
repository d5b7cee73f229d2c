package io.walden.server.http;

import io.netty.channel.ChannelInitializer;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateHandler;

/**
 * The pipeline of each accepted HTTP connection: TLS when configured, the connection cap ({@link ConnectionLimit}),
 * the idle timer, the HTTP codec, then the API: {@link RequestGate} (token and size, before a body is buffered), the
 * aggregator, and the router's connection (in-order answers to pipelined requests). A connection accepted before
 * {@link #serve} is answered by {@code notServing} instead: a cluster's server that is joining (docs/cluster.md).
 *
 * <p>Thread-safety: {@link #initChannel} runs on the event loops; {@link #serve} is called once, by the starting
 * thread. The router and the tokens are published together through one volatile field: a connection sees both or
 * neither.
 */
public final class HttpPipeline extends ChannelInitializer<SocketChannel> {
    private static final int MAX_INITIAL_LINE = 4096;
    private static final int MAX_HEADER_SIZE = 8192;
    private static final int IDLE_SECONDS = 120;

    private record Api(HttpRouter router, Access access) {
    }

    /** Null without TLS. */
    private final SslContext tls;
    private final ConnectionLimit connections;
    private final int maxContent;
    private final NotServingYet notServing;
    private volatile Api api;

    /**
     * @param maxContent the largest request body (an append's; {@code max-batch-bytes})
     * @param notServing the answer to every request before {@link #serve}
     */
    public HttpPipeline(SslContext tls, int maxConnections, int maxContent, NotServingYet notServing) {
        this.tls = tls;
        this.connections = new ConnectionLimit(maxConnections);
        this.maxContent = maxContent;
        this.notServing = notServing;
    }

    /** From now on, each new connection is served by {@code router}, its tokens checked against {@code access}. */
    public void serve(HttpRouter router, Access access) {
        this.api = new Api(router, access);
    }

    @Override
    protected void initChannel(SocketChannel ch) {
        if (tls != null) {
            ch.pipeline().addLast(tls.newHandler(ch.alloc()));
        }
        ch.pipeline()
                .addLast(connections)
                .addLast(new IdleStateHandler(IDLE_SECONDS, 0, 0))
                .addLast(new HttpRequestDecoder(MAX_INITIAL_LINE, MAX_HEADER_SIZE, 8192))
                // Hot answers are written pre-encoded from this handler's context (HttpConnection).
                .addLast(new HttpResponseEncoder());
        Api serving = api;
        if (serving == null) {
            ch.pipeline().addLast(notServing);
            return;
        }
        ch.pipeline()
                .addLast(new RequestGate(serving.router().routes(), serving.access(), maxContent))
                .addLast(new HttpObjectAggregator(maxContent))
                .addLast(serving.router().newConnection());
    }
}
