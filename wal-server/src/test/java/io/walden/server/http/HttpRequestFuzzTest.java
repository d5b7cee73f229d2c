package io.walden.server.http;

import com.code_intelligence.jazzer.api.BugDetectors;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.HttpUtil;
import io.walden.core.Eventually;
import io.walden.server.WaldenServer;
import io.walden.server.config.ServerConfig;
import io.walden.server.contract.ApiContract;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fuzz target for the HTTP request path of a running sidecar (its real pipeline over a real TCP connection: codec,
 * connection limit, token and size gate, aggregator, routing, the data and admin APIs). The server requires a token.
 * Whatever a client sends, every byte that comes back is a well-formed HTTP response, none is a 500 (an internal
 * error is a bug: bad input is the client's error, 4xx), every JSON body parses, and the log gains no record unless
 * the client presented the token. The client sends its bytes and closes its side, so every input ends quickly.
 */
class HttpRequestFuzzTest {
    static final String TOKEN = "fuzz-token";
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Two servers alike: inputs that carry the token go to the first; the second never sees it, so it never writes. */
    private static WaldenServer tokenHolders;
    private static WaldenServer strangers;
    private static long strangersEnd;

    private static synchronized void start() throws Exception {
        if (tokenHolders == null) {
            tokenHolders = startServer();
            strangers = startServer();
            strangersEnd = strangers.wal().insertLsn();
        }
    }

    private static WaldenServer startServer() throws Exception {
        String dir = Files.createTempDirectory("walden-fuzz-http").resolve("log").toString();
        WaldenServer server = new WaldenServer(ServerConfig.load(null, Map.of("data-dir", dir, "http", "127.0.0.1:0",
                "auth-token", TOKEN, "replication-listen", "127.0.0.1:0", "replication-secret", "fuzz-secret",
                "durability", "local", "max-batch-bytes", "65536", "max-batch-records", "64",
                "segment-size", Long.toString(1 << 20)))).start();
        Runtime.getRuntime().addShutdownHook(new Thread(server::close));
        return server;
    }

    @FuzzTest(maxDuration = "5s")
    void everyAnswerIsWellFormedNeverAnInternalErrorAndNothingIsWrittenWithoutTheToken(byte[] bytes) throws Exception {
        start();
        boolean hasToken = indexOf(bytes, TOKEN.getBytes(StandardCharsets.UTF_8)) >= 0;
        WaldenServer s = hasToken ? tokenHolders : strangers;
        InetSocketAddress at = s.boundAddress();
        byte[] answer;
        // Jazzer's SSRF detector flags every connection; this target's one destination is its own server.
        try (var ownServerOnly = BugDetectors.allowNetworkConnections((host, port) -> port == at.getPort());
             Socket socket = new Socket(at.getAddress(), at.getPort())) {
            socket.setSoTimeout(30_000);
            try {
                socket.getOutputStream().write(bytes);
                socket.shutdownOutput();
            } catch (IOException closedEarly) {
                // the server may answer and close before it has read everything (a refused request)
            }
            try {
                answer = socket.getInputStream().readAllBytes();
            } catch (SocketException reset) {
                answer = new byte[0];
            }
        }
        for (FullHttpResponse response : decode(answer)) {
            try {
                assertThat(response.status().code()).as("an internal error: %s", body(response)).isNotEqualTo(500);
                String type = response.headers().get(HttpHeaderNames.CONTENT_TYPE, "");
                if (type.startsWith("application/json") && response.content().isReadable()) {
                    JSON.readTree(body(response)); // throws on a malformed body
                    ApiContract.get().checkError(response.status().code(), type,
                            body(response).getBytes(StandardCharsets.UTF_8));
                }
            } finally {
                response.release();
            }
        }
        if (!hasToken) {
            settle(s);
            assertThat(s.wal().insertLsn()).as("written without the token").isEqualTo(strangersEnd);
        }
    }

    /** Waits until the server has answered every request it received. */
    private static void settle(WaldenServer s) throws Exception {
        assertThat(Eventually.holdsWithin(60, () -> s.inFlightRequests() == 0)).as("requests still in flight after a minute").isTrue();
    }

    /** The responses in {@code answer}; fails on any byte that is not part of a well-formed response. */
    private static List<FullHttpResponse> decode(byte[] answer) {
        EmbeddedChannel decoder = new EmbeddedChannel(new HttpResponseDecoder(), new HttpObjectAggregator(1 << 24));
        List<FullHttpResponse> responses = new ArrayList<>();
        try {
            decoder.writeInbound(Unpooled.wrappedBuffer(answer));
            decoder.finish();
            for (Object o; (o = decoder.readInbound()) != null; ) {
                FullHttpResponse r = (FullHttpResponse) o;
                assertThat(r.decoderResult().isSuccess()).as("a malformed response: %s", r.decoderResult()).isTrue();
                if (HttpUtil.isContentLengthSet(r)) {
                    assertThat((long) r.content().readableBytes()).isEqualTo(HttpUtil.getContentLength(r));
                }
                responses.add(r);
            }
        } finally {
            decoder.finishAndReleaseAll();
        }
        return responses;
    }

    private static String body(FullHttpResponse r) {
        return r.content().toString(StandardCharsets.UTF_8);
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
