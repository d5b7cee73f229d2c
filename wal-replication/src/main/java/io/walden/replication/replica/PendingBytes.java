package io.walden.replication.replica;

import io.netty.channel.Channel;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Bytes received on one connection and not yet written by their logs' receivers: above {@code max} the connection stops
 * reading (TCP pushes back on the primary), below half of it reading resumes. A version 6 primary bounds each log's
 * share by its window, so only many logs behind at once reach it.
 *
 * <p>Thread-safety: any thread.
 */
final class PendingBytes {
    private final Channel channel;
    private final long max;
    private final AtomicLong bytes = new AtomicLong();

    PendingBytes(Channel channel, long max) {
        this.channel = channel;
        this.max = max;
    }

    long get() {
        return bytes.get();
    }

    void add(long delta) {
        long now = bytes.addAndGet(delta);
        if (delta > 0 && now > max) {
            channel.config().setAutoRead(false);
        } else if (delta < 0 && now <= max / 2 && !channel.config().isAutoRead()) {
            channel.config().setAutoRead(true);
        }
    }
}
