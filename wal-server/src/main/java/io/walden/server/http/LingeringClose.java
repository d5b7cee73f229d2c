package io.walden.server.http;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.socket.DuplexChannel;

import java.util.concurrent.TimeUnit;

/**
 * Closes a connection after its last answer without destroying that answer (what nginx calls a lingering close). A
 * connection closed while the client's bytes are still unread (the body of a refused request, a request pipelined
 * behind the last answer) sends the client a reset, and a reset may discard the answer from the client's receive
 * buffer before the client read it: the client sees the connection fail instead of the 413 or 400 it was sent. So the
 * server half-closes instead (the client reads the answer, then the end of the stream), drops whatever still arrives,
 * and closes once the client closes its side, or after {@link #LINGER_SECONDS} at most.
 *
 * <p>Thread-safety: from any thread; the close runs on the channel's event loop.
 */
final class LingeringClose {
    /** The longest a half-closed connection waits for its client to close. */
    static final long LINGER_SECONDS = 2;

    private LingeringClose() {
    }

    /** Once {@code lastWrite} completes: half-closes and lingers if it succeeded, or closes at once. */
    static void after(ChannelFuture lastWrite) {
        lastWrite.addListener(f -> {
            if (f.isSuccess()) {
                linger(lastWrite.channel());
            } else {
                lastWrite.channel().close();
            }
        });
    }

    /** Half-closes {@code channel} (its answers are written) and closes it when its client does, or later at most. */
    static void linger(Channel channel) {
        if (!(channel instanceof DuplexChannel duplex) || !channel.isActive()) {
            channel.close();
            return;
        }
        duplex.shutdownOutput();
        channel.eventLoop().schedule(() -> channel.close(), LINGER_SECONDS, TimeUnit.SECONDS);
    }
}
