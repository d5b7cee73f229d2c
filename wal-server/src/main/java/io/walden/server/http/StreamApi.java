package io.walden.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.walden.core.Wal;
import io.walden.core.WalReader;
import io.walden.core.WalRecord;
import io.walden.server.logging.Units;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * {@code GET /v1/records/stream}: records as NDJSON over chunked transfer, one per line (or as binary frames,
 * {@link RecordFrames}, for a client that accepts {@code application/octet-stream}), for as long as the client
 * reads, holding one reader thread for the stream's life.
 *
 * <p>Thread-safety: stateless beyond the log and its helpers; {@link #stream} runs on an event loop, the stream
 * itself on a reader thread.
 */
final class StreamApi {
    /** Logged under DataApi, where the data API has always logged, so that log settings naming it keep working. */
    private static final Logger LOG = LoggerFactory.getLogger(DataApi.class);

    static final String NDJSON = "application/x-ndjson";
    private final Wal wal;
    private final RecordParams params;
    private final ReaderPool pool;
    private final long streamWriteTimeoutNanos;

    StreamApi(Wal wal, RecordParams params, ReaderPool pool, long streamWriteTimeoutMillis) {
        this.wal = wal;
        this.params = params;
        this.pool = pool;
        this.streamWriteTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(streamWriteTimeoutMillis);
    }

    /** GET /v1/records/stream?from=&visibility= : NDJSON over chunked transfer, one record per line, until the client goes (or half-closes). */
    void stream(Exchange ex) {
        WalReader.Visibility visibility = RecordParams.visibility(ex);
        boolean frames = RecordFrames.wanted(ex, NDJSON);
        pool.open(ex, () -> wal.reader(params.start(ex, wal.insertLsn()), visibility), reader -> {
            ex.markStreaming();
            var channel = ex.ctx().channel();
            HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            head.headers().set(HttpHeaderNames.CONTENT_TYPE, frames ? RecordFrames.MEDIA_TYPE : NDJSON);
            head.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
            channel.writeAndFlush(head);
            try (reader) {
                while (channel.isActive() && !pool.stopping() && !ex.streamEndRequested()) {
                    WalRecord r = reader.poll(500, TimeUnit.MILLISECONDS);
                    if (r == null) {
                        continue;
                    }
                    ByteBuf chunk;
                    if (frames) {
                        chunk = channel.alloc().buffer(RecordFrames.size(r));
                        RecordFrames.write(chunk, r);
                    } else {
                        chunk = Unpooled.wrappedBuffer((Exchange.JSON.writeValueAsString(ReadApi.recordJson(r)) + "\n")
                                .getBytes(StandardCharsets.UTF_8));
                    }
                    channel.writeAndFlush(new DefaultHttpContent(chunk));
                    long stalledSince = System.nanoTime();
                    while (!channel.isWritable() && channel.isActive()) {
                        // The client reads slowly: wait rather than buffer without bound, but not forever: a client
                        // that stopped reading (or vanished without a FIN) must not hold this reader thread for good.
                        if (System.nanoTime() - stalledSince > streamWriteTimeoutNanos) {
                            LOG.warn("Closing the stream to {}: it took nothing for {} (stream-write-timeout)",
                                    channel.remoteAddress(), Units.millis(TimeUnit.NANOSECONDS.toMillis(streamWriteTimeoutNanos)));
                            channel.close();
                            break;
                        }
                        Thread.sleep(5);
                    }
                }
            } finally {
                if (channel.isActive()) {
                    channel.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener(f -> ex.finish());
                } else {
                    ex.finish();
                }
            }
        });
    }
}
