package io.walden.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * The HTTP/1.1 that {@link HttpLoad} speaks: its requests as the bytes written on the wire, built once and sent
 * again and again, and one answer read back from a blocking socket.
 */
final class HttpMessages {
    private HttpMessages() {
    }

    static byte[] post(String path, byte[] body) {
        byte[] head = ("POST " + path + " HTTP/1.1\r\nHost: walden\r\nContent-Type: application/octet-stream\r\n"
                + "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[head.length + body.length];
        System.arraycopy(head, 0, out, 0, head.length);
        System.arraycopy(body, 0, out, head.length, body.length);
        return out;
    }

    static byte[] get(String path) {
        return ("GET " + path + " HTTP/1.1\r\nHost: walden\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    }

    /** A GET that asks for {@code mediaType} ({@code application/octet-stream}: binary record frames). */
    static byte[] get(String path, String mediaType) {
        return ("GET " + path + " HTTP/1.1\r\nHost: walden\r\nAccept: " + mediaType + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
    }

    /** A batch body: {@code count} records, each a 4-byte big-endian length and its bytes (docs/http-api.md). */
    static byte[] batchBody(int count, int payload) {
        ByteBuf b = Unpooled.buffer();
        for (int i = 0; i < count; i++) {
            b.writeInt(payload).writeZero(payload);
        }
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        return out;
    }

    /** Reads one answer (head and Content-Length body) from a blocking stream; throws unless it is a 200. */
    static void readAnswer(InputStream in, byte[] buffer) throws IOException {
        int filled = 0;
        int headEnd = -1;
        int contentLength = -1;
        while (true) {
            int n = in.read(buffer, filled, buffer.length - filled);
            if (n < 0) {
                throw new IOException("the server closed the connection");
            }
            filled += n;
            if (headEnd < 0) {
                for (int i = 0; i + 3 < filled; i++) {
                    if (buffer[i] == '\r' && buffer[i + 1] == '\n' && buffer[i + 2] == '\r' && buffer[i + 3] == '\n') {
                        headEnd = i + 4;
                        String head = new String(buffer, 0, headEnd, StandardCharsets.US_ASCII);
                        if (!head.startsWith("HTTP/1.1 200")) {
                            throw new IOException("answered " + head);
                        }
                        int at = head.toLowerCase(Locale.ROOT).indexOf("content-length:");
                        contentLength = Integer.parseInt(head.substring(at + 15, head.indexOf('\r', at)).trim());
                        break;
                    }
                }
            }
            if (headEnd >= 0 && filled >= headEnd + contentLength) {
                return; // one request at a time: nothing follows this answer
            }
        }
    }
}
