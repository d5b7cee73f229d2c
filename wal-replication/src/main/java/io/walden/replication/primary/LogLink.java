package io.walden.replication.primary;

import io.netty.channel.Channel;
import io.walden.replication.protocol.Frame;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One log's stream on a version 6 connection (docs/replication-protocol.md, "Version 6"): each frame goes in an On log
 * envelope with the log's number; ending the stream sends a Restart (unless it ended with an Error, which ends it
 * itself) and tells the connection, which forgets the stream; the connection stays open for the other logs.
 *
 * <p>Thread-safety: every method from any thread; the stream ends once.
 */
final class LogLink implements Link {
    private final Channel channel;
    private final int log;
    private final String name;
    private final Runnable onEnd;
    private final AtomicBoolean ended = new AtomicBoolean();

    /**
     * @param name  the log's name, for the log
     * @param onEnd run once when the stream ends (the connection forgets it)
     */
    LogLink(Channel channel, int log, String name, Runnable onEnd) {
        this.channel = channel;
        this.log = log;
        this.name = name;
        this.onEnd = onEnd;
    }

    @Override
    public void send(Frame frame) {
        if (!ended.get()) {
            channel.writeAndFlush(new Frame.OnLog(log, frame));
        } else if (frame instanceof Frame.Data d) {
            d.release();
        }
    }

    @Override
    public void end(Frame last) {
        if (!ended.compareAndSet(false, true)) {
            return;
        }
        if (last != null) {
            channel.write(new Frame.OnLog(log, last));
        }
        if (!(last instanceof Frame.Error)) {
            channel.write(new Frame.OnLog(log, new Frame.Restart()));
        }
        channel.flush();
        onEnd.run();
    }

    @Override
    public boolean isOpen() {
        return !ended.get() && channel.isActive();
    }

    @Override
    public boolean isWritable() {
        return channel.isWritable();
    }

    @Override
    public Object peer() {
        return channel.remoteAddress() + " (log " + name + ")";
    }
}
