package io.walden.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.walden.core.Lsn;
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

    /**
     * GET /v1/records/stream?from=&visibility= : NDJSON over chunked transfer, one record per line, until the client goes
     * (or half-closes), the server stops, or the log cannot go on: then a last line (or frame) says why.
     */
    void stream(Exchange ex) {
        WalReader.Visibility visibility = RecordParams.visibility(ex);
        boolean frames = RecordFrames.wanted(ex, NDJSON);
        pool.open(ex, () -> wal.reader(params.start(ex, wal.insertLsn()), visibility), reader -> {
            ex.markStreaming();
            var channel = ex.ctx().channel();
            HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            head.headers().set(HttpHeaderNames.CONTENT_TYPE, frames ? RecordFrames.MEDIA_TYPE : NDJSON);
            head.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
            head.headers().set(HttpHeaderNames.VARY, HttpHeaderNames.ACCEPT); // frames or NDJSON, by the request's Accept
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
                    awaitWritable(channel);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // the server is stopping: the stream ends as it does then
            } catch (Exception e) {
                endWithError(ex, channel, frames, reader.position(), e);
            } finally {
                if (channel.isActive()) {
                    channel.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener(f -> ex.finish());
                } else {
                    ex.finish();
                }
            }
        });
    }

    /**
     * The client reads slowly: wait rather than buffer without bound, but not forever: a client that stopped reading
     * (or vanished without a FIN) must not hold this reader thread for good.
     */
    private void awaitWritable(Channel channel) throws InterruptedException {
        long stalledSince = System.nanoTime();
        while (!channel.isWritable() && channel.isActive()) {
            if (System.nanoTime() - stalledSince > streamWriteTimeoutNanos) {
                LOG.warn("Closing the stream to {}: it took nothing for {} (stream-write-timeout)",
                        channel.remoteAddress(), Units.millis(TimeUnit.NANOSECONDS.toMillis(streamWriteTimeoutNanos)));
                channel.close();
                return;
            }
            Thread.sleep(5);
        }
    }

    /**
     * The stream cannot go on from {@code position} (retention removed the segment it reads next: {@code lsn_removed};
     * a damaged record; a failed log; a named log reopened or deleted: {@code log_closed}): it ends with the error a
     * plain read would answer, as its last line ({@code Error} object) or frame ({@link RecordFrames#writeError}), so
     * that the client can tell it from a clean end, and the log says so at WARN.
     */
    private static void endWithError(Exchange ex, Channel channel, boolean frames, long position, Exception e) {
        ApiErrors.Described error = ApiErrors.describe(ex, e);
        LOG.warn("Ended the stream to {} at {} with {}: {}", channel.remoteAddress(), Lsn.format(position), error.code(),
                error.detail());
        if (!channel.isActive()) {
            return;
        }
        byte[] json;
        try {
            json = Exchange.JSON.writeValueAsBytes(error.body());
        } catch (JsonProcessingException impossible) { // a map of strings
            throw new IllegalStateException(impossible);
        }
        ByteBuf chunk;
        if (frames) {
            chunk = channel.alloc().buffer(RecordFrames.HEADER_BYTES + json.length);
            RecordFrames.writeError(chunk, json);
        } else {
            chunk = Unpooled.wrappedBuffer(json, new byte[] {'\n'});
        }
        channel.writeAndFlush(new DefaultHttpContent(chunk));
    }
}
