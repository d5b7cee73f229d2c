package io.walden.replication;

import com.code_intelligence.jazzer.api.BugDetectors;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.walden.core.Durability;
import io.walden.core.Wal;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.protocol.Frame;
import io.walden.replication.protocol.FrameDecoder;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fuzz target for the primary's side of the handshake, over a real TCP connection to a running
 * {@link ReplicationServer} that requires a secret: whatever a peer sends, the primary answers only with
 * well-formed frames (docs/replication-protocol.md), streams nothing and says nothing about its log (no Welcome)
 * to a peer that did not present the secret, ends the connection after an Error, and stays up for the next peer.
 * The peer sends its bytes and then closes its side, so every input ends within milliseconds.
 */
class HandshakeFuzzTest {
    static final long LOG_ID = 0x5EED;
    static final String SECRET = "fuzz-secret";
    private static Wal primary;
    private static ReplicationServer server;

    private static synchronized ReplicationServer server() throws Exception {
        if (server == null) {
            Path dir = Files.createTempDirectory("walden-fuzz-handshake");
            primary = Wal.open(Replicas.config(dir).logId(LOG_ID).build());
            for (int i = 0; i < 3; i++) {
                primary.append(("record " + i).getBytes(StandardCharsets.UTF_8), Durability.LOCAL);
            }
            server = ReplicationServer.builder(primary).listen(Replicas.ANY_LOOPBACK_PORT).secret(SECRET)
                    .handshakeTimeoutMillis(2000).start();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                server.close();
                primary.close();
            }));
        }
        return server;
    }

    @FuzzTest(maxDuration = "5s")
    void primaryAnswersAnyBytesWithWellFormedFramesAndWelcomesOnlyThePeerWithTheSecret(byte[] bytes) throws Exception {
        ReplicationServer s = server();
        byte[] answer;
        // Jazzer's SSRF detector flags every connection; this target's one destination is its own primary.
        try (var loopbackOnly = BugDetectors.allowNetworkConnections((host, port) -> port == s.address().getPort());
             Socket socket = new Socket(s.address().getAddress(), s.address().getPort())) {
            socket.setSoTimeout(10_000);
            try {
                socket.getOutputStream().write(bytes);
                socket.shutdownOutput();
            } catch (IOException closedEarly) {
                // the primary may close (after an Error) before it has read all we send
            }
            answer = readUntilClosed(socket.getInputStream());
        }
        List<Frame> frames = decode(answer);
        if (frames.isEmpty()) {
            return;
        }
        Frame first = frames.get(0);
        if (first instanceof Frame.Error) {
            assertThat(frames).as("nothing after an Error").hasSize(1);
            return;
        }
        assertThat(first).as("the first answer is a Welcome or an Error").isInstanceOf(Frame.Welcome.class);
        assertThat(indexOf(bytes, SECRET.getBytes(StandardCharsets.UTF_8))).as("welcomed without the secret").isNotNegative();
        assertThat(((Frame.Welcome) first).logId()).isEqualTo(LOG_ID);
        for (Frame f : frames.subList(1, frames.size())) {
            assertThat(f).isInstanceOfAny(Frame.Data.class, Frame.Keepalive.class, Frame.Error.class);
        }
    }

    private static byte[] readUntilClosed(InputStream in) throws IOException {
        try {
            return in.readAllBytes();
        } catch (SocketException reset) {
            return new byte[0]; // reset after an early close: what came before is not kept by the socket API
        }
    }

    /** Every byte the primary sent is part of a well-formed frame. */
    private static List<Frame> decode(byte[] answer) {
        EmbeddedChannel decoder = new EmbeddedChannel(new FrameDecoder(64 << 20));
        List<Frame> frames = new ArrayList<>();
        try {
            decoder.writeInbound(Unpooled.wrappedBuffer(answer));
            for (Object f; (f = decoder.readInbound()) != null; ) {
                frames.add((Frame) f);
                ReferenceCountUtil.release(f);
            }
        } finally {
            decoder.finishAndReleaseAll();
        }
        return frames;
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
