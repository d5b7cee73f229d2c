package io.walden.server.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One request and the means to answer it exactly once, from any thread (the answer is handed to the
 * channel's event loop). After answering, the connection reads its next request: requests on one
 * connection are answered in order (HTTP/1.1 pipelining) because the next one is read only then.
 */
public final class Exchange {
    static final ObjectMapper JSON = new ObjectMapper();

    private final ChannelHandlerContext ctx;
    private final FullHttpRequest request;
    private final QueryStringDecoder query;
    private boolean keepAlive;
    private final Runnable onDone;
    private boolean answered;

    Exchange(ChannelHandlerContext ctx, FullHttpRequest request, Runnable onDone) {
        this.ctx = ctx;
        this.request = request;
        this.query = new QueryStringDecoder(request.uri());
        this.keepAlive = HttpUtil.isKeepAlive(request);
        this.onDone = onDone;
    }

    public FullHttpRequest request() {
        return request;
    }

    public String path() {
        return query.path();
    }

    public ChannelHandlerContext ctx() {
        return ctx;
    }

    /** A query parameter's single value, or null. */
    public String param(String name) {
        List<String> v = query.parameters().get(name);
        return v == null || v.isEmpty() ? null : v.get(0);
    }

    /** Answers with a JSON body. */
    public void json(HttpResponseStatus status, Object body) {
        byte[] bytes;
        try {
            bytes = JSON.writeValueAsBytes(body);
        } catch (Exception e) {
            bytes = ("{\"error\":\"internal\",\"detail\":\"" + e.getClass().getSimpleName() + "\"}").getBytes(StandardCharsets.UTF_8);
            status = HttpResponseStatus.INTERNAL_SERVER_ERROR;
        }
        send(status, Unpooled.wrappedBuffer(bytes), "application/json");
    }

    /** Answers with {@code {"error": ..., "detail": ...}}. */
    public void error(HttpResponseStatus status, String error, String detail) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", error);
        body.put("detail", detail);
        json(status, body);
    }

    public void text(HttpResponseStatus status, String body, String contentType) {
        send(status, Unpooled.copiedBuffer(body, StandardCharsets.UTF_8), contentType);
    }

    private void send(HttpResponseStatus status, ByteBuf content, String contentType) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
        if (keepAlive) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
        }
        writeOnLoop(response);
    }

    /** Closes the connection after the answer (the request could not be parsed: nothing after it can be). */
    void closeAfterAnswer() {
        keepAlive = false;
    }

    /** Starts a streamed (chunked) answer; the caller writes the chunks and the last one. */
    void markStreaming() {
        answered = true;
    }

    private void writeOnLoop(FullHttpResponse response) {
        if (!ctx.executor().inEventLoop()) {
            ctx.executor().execute(() -> writeOnLoop(response));
            return;
        }
        if (answered) {
            response.release();
            return;
        }
        answered = true;
        request.release();
        ctx.writeAndFlush(response).addListener(keepAlive ? (ChannelFutureListener) f -> onDone.run()
                : ChannelFutureListener.CLOSE);
    }
}
