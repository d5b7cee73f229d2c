package io.walden.replication.primary;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.walden.replication.protocol.Frame;

/**
 * Where one log's stream to one replica goes: the whole connection (version 5: ending the stream closes it) or one log
 * of a connection that carries every log of a store (version 6, {@link LogLink}: each frame in an On log envelope,
 * and ending the stream tells the replica to start it again). {@link Sender} and {@link LogStream} speak through it.
 *
 * <p>Thread-safety: every method from any thread (the sender's and the connection's event loop).
 */
interface Link {
    /** Sends a frame of this log's stream. */
    void send(Frame frame);

    /**
     * Ends this log's stream, after {@code last} if not null: an Error (the replica decides from its code whether to
     * retry), or a Welcome after which it starts again (an identity answer, a rewind).
     */
    void end(Frame last);

    /** Whether frames sent now reach the replica. */
    boolean isOpen();

    /** Whether the connection takes more without buffering past its high-water mark. */
    boolean isWritable();

    /** Who the replica is, for the log. */
    Object peer();

    /** A version 5 stream: the connection is the stream. */
    static Link of(Channel channel) {
        return new Link() {
            @Override
            public void send(Frame frame) {
                channel.writeAndFlush(frame);
            }

            @Override
            public void end(Frame last) {
                if (last == null) {
                    channel.close();
                } else {
                    channel.writeAndFlush(last).addListener(ChannelFutureListener.CLOSE); // closed once it is written
                }
            }

            @Override
            public boolean isOpen() {
                return channel.isActive();
            }

            @Override
            public boolean isWritable() {
                return channel.isWritable();
            }

            @Override
            public Object peer() {
                return channel.remoteAddress();
            }
        };
    }
}
