package io.walden.server;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/** HTTP/1.1 spoken by hand on a socket, for tests that need to hold a connection or time its bytes. */
final class RawHttp {
    private RawHttp() {
    }

    /** One answer (head and Content-Length body) as text, or null at the end of the stream. */
    static String readAnswer(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                return null;
            }
            head.append((char) b);
        }
        String h = head.toString();
        int at = h.toLowerCase(Locale.ROOT).indexOf("content-length:");
        int length = at < 0 ? 0 : Integer.parseInt(h.substring(at + 15, h.indexOf('\r', at)).trim());
        byte[] body = in.readNBytes(length);
        if (body.length < length) {
            return null;
        }
        return h + new String(body, StandardCharsets.UTF_8);
    }

    /**
     * Sends {@code GET /health} on the socket and reads its answer, leaving the connection open. A connected socket
     * is not yet one the server took: until its accept loop reaches it, it waits in the kernel's queue, and a server
     * that stops accepting then resets it. An answer proves the server holds the connection.
     */
    static void proveAccepted(Socket socket) throws IOException {
        socket.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        String answer = readAnswer(socket.getInputStream());
        if (answer == null || !answer.startsWith("HTTP/1.1 200")) {
            throw new IOException("the server did not answer /health on the connection: " + answer);
        }
    }
}
