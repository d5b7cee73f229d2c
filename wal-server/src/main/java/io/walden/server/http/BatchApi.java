package io.walden.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.walden.core.AppendCompletion;
import io.walden.core.Compression;
import io.walden.core.Durability;
import io.walden.core.Lsn;
import io.walden.core.PayloadTooLargeException;
import io.walden.core.Wal;
import io.walden.server.logging.Units;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * {@code POST /v1/records/batch}: appends a batch of records, all validated before any is written, with one
 * durability wait for the whole batch.
 *
 * <p>Thread-safety: stateless beyond the log and its helpers; {@link #batch} runs on an event loop, and the rest of
 * a batch that must wait for a segment on the segment-wait thread.
 */
final class BatchApi {
    /** What each record of a batch costs beyond its payload, charged against max-batch-bytes. */
    static final int RECORD_OVERHEAD = 64;

    private final Wal wal;
    private final RecordParams params;
    private final SegmentWaits segmentWaits;
    private final LoopFlush loopFlush;
    private final CommitLatency latency;
    private final long maxBatchBytes;
    private final int maxBatchRecords;

    BatchApi(Wal wal, RecordParams params, SegmentWaits segmentWaits, LoopFlush loopFlush, CommitLatency latency,
             long maxBatchBytes, int maxBatchRecords) {
        this.wal = wal;
        this.params = params;
        this.segmentWaits = segmentWaits;
        this.loopFlush = loopFlush;
        this.latency = latency;
        this.maxBatchBytes = maxBatchBytes;
        this.maxBatchRecords = maxBatchRecords;
    }

    /**
     * POST /v1/records/batch: the body is a sequence of records, each a 4-byte big-endian length followed by
     * that many payload bytes. Everything is validated before anything is written, in one pass that allocates
     * nothing per record; a batch may hold at most {@code max-batch-records} records, and each is charged
     * {@link #RECORD_OVERHEAD} bytes beyond its payload against {@code max-batch-bytes} (64 MiB of empty records
     * would otherwise be 16 M records of work on one event loop). One durability wait covers the batch (its last
     * record's, since a flush covers everything before it). Records are copied straight from the request's buffer.
     */
    void batch(Exchange ex) {
        Durability level = params.durability(ex);
        int type = RecordParams.type(ex);
        ByteBuf body = ex.request().content();
        BatchFraming framing = BatchFraming.of(ex);
        if (framing == null) {
            ex.error(HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type", "Content-Type '"
                    + ex.request().headers().get(HttpHeaderNames.CONTENT_TYPE) + "' is not a batch's: "
                    + BatchFraming.FRAMES_MEDIA_TYPE + " for record frames, application/octet-stream for length-prefixed"
                    + " records; nothing was written");
            return;
        }
        int count = countBatch(ex, body, framing);
        if (count < 0) {
            return; // refused, answered
        }
        appendBatch(ex, body, framing, type, level, params.compression(ex), count, 0, body.readerIndex(),
                new ArrayList<>(count), false);
    }

    /**
     * Appends records {@code from} to {@code count - 1} of a validated batch body starting at byte {@code at}: all but
     * the last at durability off, the last at the batch's level, whose completion answers. On an event loop
     * ({@code mayWait} false) the batch's flush is the loop's ({@link LoopFlush}), as a single append's; a record
     * that needs a segment not prepared yet hands the rest of the batch to a thread that may wait.
     */
    private void appendBatch(Exchange ex, ByteBuf body, BatchFraming framing, int batchType, Durability level,
                             Compression compression, int count, int from, int at, List<String> lsns, boolean mayWait) {
        for (int i = from; i < count; i++) {
            int length = framing.length(body, at);
            int type = framing.type(body, at, batchType);
            ByteBuffer payload = body.nioBuffer(at + framing.headerBytes(), length);
            try {
                boolean appended;
                if (i < count - 1) {
                    CompletableFuture<Long> f = mayWait ? wal.appendAsync(type, payload, Durability.OFF, compression)
                            : wal.nonWaiting().tryAppendAsync(type, payload, Durability.OFF, compression);
                    appended = f != null;
                    if (appended) {
                        lsns.add(Lsn.format(f.join())); // OFF futures are complete on return
                    }
                } else {
                    BatchAnswer answer = new BatchAnswer(ex, lsns, level, latency);
                    appended = true;
                    if (mayWait) {
                        wal.appendAsync(type, payload, level, compression).whenComplete(answer::tell);
                    } else {
                        appended = wal.nonWaiting().tryAppend(type, payload, level, compression, answer);
                    }
                }
                if (!appended) {
                    int index = i;
                    int position = at;
                    segmentWaits.submit(ex, () -> appendBatch(ex, body, framing, batchType, level, compression, count, index,
                            position, lsns, true));
                    return;
                }
            } catch (RuntimeException e) {
                answerPartialBatch(ex, e, lsns);
                releaseIfOnLoop(ex);
                return;
            }
            at += framing.headerBytes() + length;
        }
        if (!mayWait) {
            ex.releaseRequest(); // copied into the log: do not hold the body through the durability wait
            if (level.waitsForLocalFlush()) {
                loopFlush.afterBatch(ex);
            }
        }
    }

    /** Answers a batch once its last record reached the batch's level: the LSNs of all its records, in order. */
    private static final class BatchAnswer extends AppendCompletion {
        private final Exchange ex;
        private final List<String> lsns;
        private final Durability level;
        private final CommitLatency latency;
        private final long startNanos = System.nanoTime();

        BatchAnswer(Exchange ex, List<String> lsns, Durability level, CommitLatency latency) {
            this.ex = ex;
            this.lsns = lsns;
            this.level = level;
            this.latency = latency;
        }

        @Override
        protected void durable(long lsn) {
            latency.record(level, startNanos);
            lsns.add(Lsn.format(lsn));
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("lsns", lsns);
            out.put("durability", level.configName());
            ex.json(HttpResponseStatus.OK, out); // to the connection's event loop from wherever this runs
        }

        @Override
        protected void failed(Throwable cause) {
            ApiErrors.answer(ex, cause);
        }

        /** For an append off the event loop, whose future tells. */
        void tell(Long lsn, Throwable error) {
            if (error != null) {
                ApiErrors.answer(ex, error);
            } else {
                durable(lsn);
            }
        }
    }

    /**
     * Releases the body as soon as it was copied, on the event loop; off it (a batch finished by the segment-wait
     * thread) the task's own reference goes with the task, and the exchange's with its answer.
     */
    private static void releaseIfOnLoop(Exchange ex) {
        if (ex.ctx().executor().inEventLoop()) {
            ex.releaseRequest();
        }
    }

    /** Validates a batch body; returns its record count, or -1 after answering a refusal. */
    private int countBatch(Exchange ex, ByteBuf body, BatchFraming framing) {
        int max = wal.config().maxPayloadSize();
        int count = 0;
        long charged = 0;
        for (int at = body.readerIndex(); at < body.writerIndex(); ) {
            if (body.writerIndex() - at < framing.headerBytes()) {
                throw new IllegalArgumentException("batch body: " + (body.writerIndex() - at) + " trailing bytes where a "
                        + framing.headerBytes() + "-byte record header was expected (record " + count + ")");
            }
            if (framing.isErrorFrame(body, at)) {
                throw new IllegalArgumentException("batch body: record " + count + " is an error frame (LSN "
                        + "FFFFFFFF/FFFFFFFF, the end of a stream that could not go on), not a record; nothing was written");
            }
            long length = framing.declaredLength(body, at);
            at += framing.headerBytes();
            if (length > max) {
                throw new PayloadTooLargeException(length, max);
            }
            if (length > body.writerIndex() - at) {
                throw new IllegalArgumentException("batch body: record " + count + " declares " + length
                        + " bytes but only " + (body.writerIndex() - at) + " follow");
            }
            count++;
            charged += length + RECORD_OVERHEAD;
            if (count > maxBatchRecords || charged > maxBatchBytes) {
                ex.error(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "payload_too_large", count > maxBatchRecords
                        ? "a batch holds at most " + maxBatchRecords + " records (max-batch-records); nothing was written"
                        : "the batch exceeds max-batch-bytes (" + Units.size(maxBatchBytes) + ") counting " + RECORD_OVERHEAD
                                + " bytes of overhead per record; nothing was written");
                return -1;
            }
            at += (int) length;
        }
        if (count == 0) {
            throw new IllegalArgumentException("batch body is empty: send at least one length-prefixed record");
        }
        return count;
    }

    /**
     * A batch that failed part-way (the log closed or failed, or the disk filled at a segment roll): the error
     * lists the records already appended, which are in the log (at durability off), so a client can avoid
     * appending them twice.
     */
    private static void answerPartialBatch(Exchange ex, RuntimeException e, List<String> written) {
        if (written.isEmpty()) {
            ApiErrors.answer(ex, e);
            return;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("error", "batch_incomplete");
        out.put("detail", "the first " + written.size() + " record(s) were appended, then: " + e.getMessage());
        out.put("written_lsns", written);
        ex.json(HttpResponseStatus.SERVICE_UNAVAILABLE, out);
    }
}
