package io.walden.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.walden.core.Durability;

import java.nio.charset.StandardCharsets;

/**
 * The answers the hot paths send, encoded straight into one buffer (status line, headers, JSON body) instead of
 * through a response object, header map and JSON library: an append's {@code {"lsn":"X/Y","durability":"..."}} and
 * {@code /health}'s constant. Same headers as every other answer (docs/http-api.md): {@code content-type},
 * {@code content-length}, {@code connection}.
 *
 * <p>Thread-safety: stateless; the constants are read-only buffers shared by every connection.
 */
public final class HttpResponses {
    private static final byte[] OK_JSON_HEAD = ("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ")
            .getBytes(StandardCharsets.US_ASCII);
    private static final byte[] KEEP_ALIVE = "\r\nconnection: keep-alive\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CLOSE = "\r\nconnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] LSN_OPEN = "{\"lsn\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[][] LEVEL_CLOSE = new byte[Durability.values().length][];
    private static final ByteBuf HEALTH_KEEP_ALIVE = constant(okJson("{\"status\":\"alive\"}", true));
    private static final ByteBuf HEALTH_CLOSE = constant(okJson("{\"status\":\"alive\"}", false));

    static {
        for (Durability d : Durability.values()) {
            LEVEL_CLOSE[d.ordinal()] = ("\",\"durability\":\"" + d.configName() + "\"}").getBytes(StandardCharsets.US_ASCII);
        }
    }

    private HttpResponses() {
    }

    /** {@code GET /health}'s whole answer: a shared read-only buffer (duplicated: the caller owns the reader index). */
    public static ByteBuf health(boolean keepAlive) {
        return (keepAlive ? HEALTH_KEEP_ALIVE : HEALTH_CLOSE).duplicate();
    }

    /** An append's whole answer, {@code 200 {"lsn":"X/Y","durability":"level"}}, in one pooled buffer. */
    static ByteBuf appended(ByteBufAllocator alloc, long lsn, Durability level, boolean keepAlive) {
        byte[] levelClose = LEVEL_CLOSE[level.ordinal()];
        int lsnLength = hexDigits(lsn >>> 32) + 1 + hexDigits(lsn & 0xFFFFFFFFL);
        int bodyLength = LSN_OPEN.length + lsnLength + levelClose.length;
        ByteBuf b = alloc.directBuffer(OK_JSON_HEAD.length + 6 + CLOSE.length + bodyLength + KEEP_ALIVE.length);
        b.writeBytes(OK_JSON_HEAD);
        writeDecimal(b, bodyLength);
        b.writeBytes(keepAlive ? KEEP_ALIVE : CLOSE);
        b.writeBytes(LSN_OPEN);
        writeHex(b, lsn >>> 32); // io.walden.core.Lsn's X/Y: upper and lower 32 bits in upper-case hex
        b.writeByte('/');
        writeHex(b, lsn & 0xFFFFFFFFL);
        b.writeBytes(levelClose);
        return b;
    }

    private static ByteBuf constant(byte[] bytes) {
        return Unpooled.unreleasableBuffer(Unpooled.directBuffer(bytes.length).writeBytes(bytes)).asReadOnly();
    }

    private static byte[] okJson(String body, boolean keepAlive) {
        return ("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: " + body.length()
                + (keepAlive ? "\r\nconnection: keep-alive\r\n\r\n" : "\r\nconnection: close\r\n\r\n") + body)
                .getBytes(StandardCharsets.US_ASCII);
    }

    private static int hexDigits(long v) {
        return v == 0 ? 1 : (67 - Long.numberOfLeadingZeros(v)) >> 2;
    }

    private static void writeHex(ByteBuf b, long v) {
        for (int shift = (hexDigits(v) - 1) * 4; shift >= 0; shift -= 4) {
            int d = (int) (v >>> shift) & 0xF;
            b.writeByte(d < 10 ? '0' + d : 'A' + d - 10);
        }
    }

    private static void writeDecimal(ByteBuf b, int v) {
        int divisor = 1;
        while (divisor <= v / 10) {
            divisor *= 10;
        }
        for (; divisor > 0; divisor /= 10) {
            b.writeByte('0' + v / divisor % 10);
        }
    }

    /** A whole response with {@code content} as its body, of {@code contentType}. */
    static FullHttpResponse full(HttpResponseStatus status, ByteBuf content, String contentType) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
        return response;
    }
}
