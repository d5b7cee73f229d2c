package io.walden.bench;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.walden.core.Lsn;
import org.HdrHistogram.Recorder;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * One keep-alive connection of a {@link ClosedLoop}: sends {@code pipeline} requests, then one more per answer. Parses
 * answers itself (status line, {@code Content-Length}, body) so that the client spends as little of the shared
 * cores as it can; times each answer from the moment its request was written.
 *
 * <p>Thread-safety: one instance per channel, called on the channel's event loop only; what it shares with the
 * thread that drives the loop (the recorder, the answer count, the flags, the failure, the latch) is thread-safe.
 */
final class ClosedLoopClient extends ChannelInboundHandlerAdapter {
    private static final byte[] CONTENT_LENGTH = "content-length:".getBytes(StandardCharsets.US_ASCII);

    private final ByteBuf template;
    private final int pipeline;
    private final boolean lsnOrder;
    private final Recorder recorder;
    private final LongAdder answers;
    private final AtomicBoolean counting;
    private final AtomicBoolean stop;
    private final AtomicReference<String> failure;
    private final CountDownLatch connected;
    private final long[] sentAt;
    private int sentHead;
    private int sentTail;
    private ByteBuf pending;
    private long lastLsn = -1;

    ClosedLoopClient(ByteBuf template, int pipeline, boolean lsnOrder, Recorder recorder, LongAdder answers,
                     AtomicBoolean counting, AtomicBoolean stop, AtomicReference<String> failure, CountDownLatch connected) {
        this.template = template;
        this.pipeline = pipeline;
        this.lsnOrder = lsnOrder;
        this.recorder = recorder;
        this.answers = answers;
        this.counting = counting;
        this.stop = stop;
        this.failure = failure;
        this.connected = connected;
        this.sentAt = new long[pipeline];
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        for (int i = 0; i < pipeline; i++) {
            send(ctx);
        }
        ctx.flush();
        connected.countDown();
    }

    private void send(ChannelHandlerContext ctx) {
        sentAt[sentTail++ % pipeline] = System.nanoTime();
        ctx.write(template.duplicate());
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        if (pending == null) {
            pending = in;
        } else {
            pending = ctx.alloc().compositeBuffer().addComponents(true, pending, in);
        }
        boolean sent = false;
        int length;
        while ((length = completeAnswer(pending)) > 0) {
            answer(pending, length);
            pending.skipBytes(length);
            if (!stop.get()) {
                send(ctx);
                sent = true;
            }
        }
        if (!pending.isReadable()) {
            pending.release();
            pending = null;
        }
        if (sent) {
            ctx.flush();
        }
    }

    /** The length of the complete answer at the reader index, or 0 when more bytes are needed. */
    private static int completeAnswer(ByteBuf b) {
        int start = b.readerIndex();
        int end = b.writerIndex();
        int headEnd = -1;
        for (int i = start; i + 3 < end; i++) {
            if (b.getByte(i) == '\r' && b.getByte(i + 1) == '\n' && b.getByte(i + 2) == '\r' && b.getByte(i + 3) == '\n') {
                headEnd = i + 4;
                break;
            }
        }
        if (headEnd < 0) {
            return 0;
        }
        int contentLength = contentLength(b, start, headEnd);
        return headEnd + contentLength <= end ? headEnd - start + contentLength : 0;
    }

    /** The Content-Length header's value in {@code [from, to)}, found without allocating (any letter case). */
    private static int contentLength(ByteBuf b, int from, int to) {
        for (int i = from; i + CONTENT_LENGTH.length < to; i++) {
            int k = 0;
            while (k < CONTENT_LENGTH.length && Character.toLowerCase(b.getByte(i + k)) == CONTENT_LENGTH[k]) {
                k++;
            }
            if (k == CONTENT_LENGTH.length) {
                int value = 0;
                for (int j = i + k; j < to; j++) {
                    byte c = b.getByte(j);
                    if (c >= '0' && c <= '9') {
                        value = value * 10 + (c - '0');
                    } else if (c == '\r') {
                        return value;
                    }
                }
            }
        }
        throw new IllegalStateException("an answer without Content-Length: " + b.toString(from, to - from,
                StandardCharsets.US_ASCII));
    }

    private void answer(ByteBuf b, int length) {
        long latency = System.nanoTime() - sentAt[sentHead++ % pipeline];
        int start = b.readerIndex();
        boolean ok = b.getByte(start + 9) == '2' && b.getByte(start + 10) == '0' && b.getByte(start + 11) == '0';
        String text = null;
        if (!ok || lsnOrder) {
            text = b.toString(start, length, StandardCharsets.US_ASCII);
        }
        if (!ok) {
            failure.compareAndSet(null, "answered " + text);
            return;
        }
        if (lsnOrder) {
            int at = text.indexOf("\"lsn\":\"");
            long lsn = Lsn.parse(text.substring(at + 7, text.indexOf('"', at + 7)));
            if (lsn <= lastLsn) {
                failure.compareAndSet(null, "answers out of order: LSN " + Lsn.format(lsn) + " after "
                        + Lsn.format(lastLsn) + " on one connection");
            }
            lastLsn = lsn;
        }
        if (counting.get()) {
            recorder.recordValue(Math.max(1, latency / 1000));
            answers.increment();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (!stop.get()) {
            failure.compareAndSet(null, cause.toString());
        }
        ctx.close();
    }
}
