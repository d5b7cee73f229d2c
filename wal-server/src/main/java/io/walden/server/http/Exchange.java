package io.walden.server.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
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
 * channel's event loop). Every way an exchange ends — an answer written, a stream finished, the connection
 * lost — goes through {@link #finish}, which releases the request and tells the handler, once.
 *
 * <p>Ordering: the handler reads the next request of a connection only after this one finished, so
 * pipelined requests are answered in order.
 */
public final class Exchange {
    static final ObjectMapper JSON = new ObjectMapper();

    /** Told once when the exchange ends; {@code keepAlive} says whether the connection reads its next request. */
    interface Done {
        void finished(Exchange exchange, boolean keepAlive);
    }

    private final ChannelHandlerContext ctx;
    private final FullHttpRequest request;
    private final QueryStringDecoder query;
    private final Done done;
    private final java.util.function.UnaryOperator<String> redact;
    private boolean keepAlive;
    private boolean answered;
    private boolean finished;
    private boolean released;
    private boolean streaming;

    Exchange(ChannelHandlerContext ctx, FullHttpRequest request, Done done, java.util.function.UnaryOperator<String> redact) {
        this.redact = redact;
        this.ctx = ctx;
        this.request = request;
        this.query = new QueryStringDecoder(request.uri());
        this.keepAlive = HttpUtil.isKeepAlive(request);
        this.done = done;
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

    /** Releases the request's body as soon as it was copied (idempotent; event loop only). */
    void releaseRequest() {
        if (!released) {
            released = true;
            request.release();
        }
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

    /** Answers with {@code {"error": ..., "detail": ...}}; the detail names files without the server's paths. */
    public void error(HttpResponseStatus status, String error, String detail) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", error);
        body.put("detail", redact(detail));
        json(status, body);
    }

    /** A message fit for a client: file names stay, the server's absolute paths go (they are the operator's business). */
    public String redact(String message) {
        return message == null ? null : redact.apply(message);
    }

    public void text(HttpResponseStatus status, String body, String contentType) {
        send(status, Unpooled.copiedBuffer(body, StandardCharsets.UTF_8), contentType);
    }

    /** Closes the connection after the answer (the request could not be parsed: nothing after it can be). */
    void closeAfterAnswer() {
        keepAlive = false;
    }

    /** The answer is a stream written by the caller; {@link #finish} ends it. */
    void markStreaming() {
        answered = true;
        streaming = true;
        keepAlive = false;
    }

    boolean isStreaming() {
        return streaming;
    }

    private void send(HttpResponseStatus status, ByteBuf content, String contentType) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
        writeOnLoop(response);
    }

    private void writeOnLoop(FullHttpResponse response) {
        if (!ctx.executor().inEventLoop()) {
            ctx.executor().execute(() -> writeOnLoop(response));
            return;
        }
        if (answered || finished) {
            response.release();
            return;
        }
        answered = true;
        response.headers().set(HttpHeaderNames.CONNECTION, keepAlive ? HttpHeaderValues.KEEP_ALIVE : HttpHeaderValues.CLOSE);
        ctx.writeAndFlush(response).addListener(f -> finish());
    }

    /** Ends the exchange once: releases the request, tells the handler, closes the connection unless kept alive. */
    void finish() {
        if (!ctx.executor().inEventLoop()) {
            ctx.executor().execute(this::finish);
            return;
        }
        if (finished) {
            return;
        }
        finished = true;
        answered = true;
        releaseRequest();
        done.finished(this, keepAlive);
        if (!keepAlive) {
            ctx.close();
        }
    }
}
