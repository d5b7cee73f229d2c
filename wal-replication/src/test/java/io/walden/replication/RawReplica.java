package io.walden.replication;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.walden.replication.protocol.Frame;
import io.walden.replication.protocol.FrameDecoder;
import io.walden.replication.protocol.FrameEncoder;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;

/**
 * A peer that speaks the replication protocol over a plain blocking socket, frame by frame, as the test tells it
 * to: for what a well-behaved {@code ReplicaClient} never does (lie about its positions, stall mid-handshake).
 * Frames are encoded and decoded with the real codec.
 */
final class RawReplica implements AutoCloseable {
    private final Socket socket;
    private final EmbeddedChannel encoder = new EmbeddedChannel(new FrameEncoder());
    private final EmbeddedChannel decoder = new EmbeddedChannel(new FrameDecoder(64 << 20));
    private final byte[] buffer = new byte[64 << 10];

    RawReplica(InetSocketAddress primary) throws IOException {
        socket = new Socket(primary.getAddress(), primary.getPort());
        socket.setSoTimeout(200);
    }

    void send(Frame frame) throws IOException {
        encoder.writeOutbound(frame);
        for (ByteBuf b; (b = encoder.readOutbound()) != null; ) {
            byte[] bytes = new byte[b.readableBytes()];
            b.readBytes(bytes);
            b.release();
            socket.getOutputStream().write(bytes);
        }
        socket.getOutputStream().flush();
    }

    /** The next frame of the given type (others are dropped), or null when none came within the timeout. */
    <T extends Frame> T receive(Class<T> type, long timeoutMillis) throws IOException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (System.currentTimeMillis() < deadline) {
            for (Object f; (f = decoder.readInbound()) != null; ) {
                if (type.isInstance(f)) {
                    return type.cast(f);
                }
                ReferenceCountUtil.release(f);
            }
            InputStream in = socket.getInputStream();
            try {
                int n = in.read(buffer);
                if (n < 0) {
                    return null;
                }
                decoder.writeInbound(Unpooled.wrappedBuffer(buffer, 0, n).copy());
            } catch (SocketTimeoutException e) {
                // nothing yet
            }
        }
        return null;
    }

    /** True once the primary closed the connection (read returns end of stream within the timeout). */
    boolean closedWithin(long timeoutMillis) throws IOException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        while (System.currentTimeMillis() < deadline) {
            try {
                if (socket.getInputStream().read(buffer) < 0) {
                    return true;
                }
            } catch (SocketTimeoutException e) {
                // still open
            } catch (IOException e) {
                return true; // reset
            }
        }
        return false;
    }

    @Override
    public void close() throws IOException {
        socket.close();
        encoder.finishAndReleaseAll();
        decoder.finishAndReleaseAll();
    }
}
