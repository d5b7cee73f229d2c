package io.walden.server.http;

import io.netty.buffer.ByteBuf;
import io.walden.core.Compression;
import io.walden.core.Durability;
import io.walden.core.PayloadTooLargeException;
import io.walden.core.Wal;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletionException;

/**
 * {@code POST /v1/records}: appends one record. The append runs on the connection's event loop (a copy into the WAL
 * buffers) and is answered by whoever makes it durable: no thread waits per request, and requests from many
 * connections are group-committed together.
 *
 * <p>Thread-safety: stateless beyond the log and its helpers; {@link #append} runs on an event loop.
 */
final class AppendApi {
    private final Wal wal;
    private final RecordParams params;
    private final SegmentWaits segmentWaits;
    private final LoopFlush loopFlush;
    private final CommitLatency latency;

    AppendApi(Wal wal, RecordParams params, SegmentWaits segmentWaits, LoopFlush loopFlush, CommitLatency latency) {
        this.wal = wal;
        this.params = params;
        this.segmentWaits = segmentWaits;
        this.loopFlush = loopFlush;
        this.latency = latency;
    }

    /**
     * POST /v1/records?durability=&type= with the payload as body. On the event loop, allocating nothing of its own: the
     * exchange is the append's completion, and its answer is encoded straight into a pooled buffer. A durable append
     * asks for the event loop's flush at the end of its batch of reads ({@link LoopFlush}).
     */
    void append(Exchange ex) {
        Durability level = params.durability(ex);
        int type = RecordParams.type(ex);
        ByteBuf body = ex.request().content();
        int length = body.readableBytes();
        if (length > wal.config().maxPayloadSize()) {
            throw new PayloadTooLargeException(length, wal.config().maxPayloadSize());
        }
        ByteBuffer payload = body.nioBuffer(body.readerIndex(), length);
        Compression compression = params.compression(ex);
        ex.appending(level, latency);
        if (!wal.nonWaiting().tryAppend(type, payload, level, compression, ex)) {
            // The next segment is not prepared yet, or the WAL buffers are full of records not yet written: never wait
            // on the event loop. The append runs where waiting is allowed; the body is held until it is copied (the
            // connection holds at most MAX_IN_FLIGHT such requests).
            segmentWaits.submit(ex, () -> wal.appendAsync(type, payload, level, compression).whenComplete((lsn, error) -> {
                if (error != null) {
                    ex.failed(error instanceof CompletionException && error.getCause() != null
                            ? error.getCause() : error);
                } else {
                    ex.durable(lsn);
                }
            }));
            return;
        }
        ex.releaseRequest(); // copied into the log: do not hold the body through the durability wait
        if (level.waitsForLocalFlush()) {
            loopFlush.afterBatch(ex);
        }
    }
}
