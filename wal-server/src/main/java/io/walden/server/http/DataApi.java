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
import io.walden.core.Compression;
import io.walden.core.Durability;
import io.walden.core.Lsn;
import io.walden.core.PayloadTooLargeException;
import io.walden.core.Wal;
import io.walden.core.WalReader;
import io.walden.core.WalRecord;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The data API (docs/http-api.md): append one record or a batch, read records (long-polling), stream them.
 *
 * <p>Appends run on the connection's event loop (a copy into the WAL buffers) and are answered by whoever makes
 * them durable: no thread waits per request, and requests from many connections are group-committed together.
 * Reads block (they may long-poll), so they run on a bounded pool; when it is full the request gets 503 rather than
 * a queue that grows without bound.
 */
public final class DataApi {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(DataApi.class);
    static final int MAX_LIMIT = 10_000;
    static final long MAX_WAIT_MS = 60_000;

    /** What each record of a batch costs beyond its payload, charged against max-batch-bytes. */
    static final int RECORD_OVERHEAD = 64;

    private final Wal wal;
    private final ExecutorService readers;
    private final long maxResponseBytes;
    private final long maxBatchBytes;
    private final int maxBatchRecords;
    private final long streamWriteTimeoutNanos;
    /** Runs the appends that must wait for the next segment or for room in the WAL buffers: never an event loop. */
    private final java.util.concurrent.Executor segmentWaits;
    private final java.util.concurrent.atomic.AtomicInteger pendingAppends = new java.util.concurrent.atomic.AtomicInteger();
    /** Whether an event loop flushes its batch of durable appends itself when no flush is in progress (see LoopFlush). */
    private final boolean flushOnEventLoop;
    private volatile boolean stopping;

    /**
     * @param maxBatchBytes   the largest batch, counting {@link #RECORD_OVERHEAD} per record (also the largest read answer)
     * @param maxBatchRecords the most records one batch may hold
     * @param streamWriteTimeoutMillis how long a stream may stay unable to write before it is closed
     * @param segmentWaits    runs appends that must wait for the next segment to be prepared (off the event loops)
     * @param flushOnEventLoop whether an event loop flushes its own batch of durable appends when no flush is in
     *                         progress (no thread hand-off for a lone request), or always leaves it to the writer
     */
    public DataApi(Wal wal, ExecutorService readers, long maxBatchBytes, int maxBatchRecords, long streamWriteTimeoutMillis,
                   java.util.concurrent.Executor segmentWaits, boolean flushOnEventLoop) {
        this.flushOnEventLoop = flushOnEventLoop;
        this.segmentWaits = segmentWaits;
        this.streamWriteTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(streamWriteTimeoutMillis);
        this.wal = wal;
        this.readers = readers;
        this.maxResponseBytes = maxBatchBytes;
        this.maxBatchBytes = maxBatchBytes;
        this.maxBatchRecords = maxBatchRecords;
    }

    public void stop() {
        stopping = true;
    }

    /**
     * POST /v1/records?durability=&type= with the payload as body. On the event loop, allocating nothing of its own: the
     * exchange is the append's completion, and its answer is encoded straight into a pooled buffer. A durable append
     * asks for the event loop's flush at the end of its batch of reads ({@link LoopFlush}).
     */
    void append(Exchange ex) {
        Durability level = durability(ex);
        int type = type(ex);
        ByteBuf body = ex.request().content();
        int length = body.readableBytes();
        if (length > wal.config().maxPayloadSize()) {
            throw new PayloadTooLargeException(length, wal.config().maxPayloadSize());
        }
        ByteBuffer payload = body.nioBuffer(body.readerIndex(), length);
        Compression compression = compression(ex);
        ex.appending(level);
        if (!wal.tryAppend(type, payload, level, compression, ex)) {
            // The next segment is not prepared yet, or the WAL buffers are full of records not yet written: never wait
            // on the event loop. The append runs where waiting is allowed; the body is held until it is copied (the
            // connection holds at most MAX_IN_FLIGHT such requests).
            waitForSegment(ex, () -> wal.appendAsync(type, payload, level, compression).whenComplete((lsn, error) -> {
                if (error != null) {
                    ex.failed(error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                            ? error.getCause() : error);
                } else {
                    ex.durable(lsn);
                }
            }));
            return;
        }
        ex.releaseRequest(); // copied into the log: do not hold the body through the durability wait
        if (level.waitsForLocalFlush()) {
            flushAfterBatch(ex);
        }
    }

    /**
     * The flush of an event loop's batch of durable appends: runs once per batch of reads, after every connection of the
     * loop that had something to read was read (Netty runs tasks after the I/O it processed). If no flush is in
     * progress, the loop flushes now itself: a lone request's commit then costs no thread hand-off at all, and the
     * loop's own answers go out without one. If one is, the background writer is asked for the next, and the loop goes
     * back to its connections. Either way the loop blocks for at most one write and force, and only for records some
     * of its own requests wait for.
     */
    private final class LoopFlush implements Runnable {
        private boolean scheduled;

        @Override
        public void run() {
            scheduled = false;
            try {
                if (flushOnEventLoop) {
                    wal.flushIfIdle();
                } else {
                    wal.requestFlush();
                }
            } catch (io.walden.core.WalException e) {
                // closed or failed: the appends' completions are told so by the log; the writer flushes what it can
                wal.requestFlush();
            }
        }
    }

    private final io.netty.util.concurrent.FastThreadLocal<LoopFlush> loopFlush = new io.netty.util.concurrent.FastThreadLocal<>() {
        @Override
        protected LoopFlush initialValue() {
            return new LoopFlush();
        }
    };

    private void flushAfterBatch(Exchange ex) {
        LoopFlush flush = loopFlush.get();
        if (!flush.scheduled) {
            flush.scheduled = true;
            try {
                ex.ctx().executor().execute(flush);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                flush.scheduled = false; // the event loop is shutting down: the writer flushes what is waiting
                wal.requestFlush();
            }
        }
    }

    /**
     * Runs an append that may wait for the next segment (or for room in the WAL buffers) off the event loop.
     *
     * <p>The task holds its own reference to the request, taken here on the event loop and released by the task: the
     * exchange releases its reference when its answer is written or the connection closes, which may happen before the
     * task has copied the body into the log (and the exchange may then carry the connection's next request). Without
     * it, the task would copy from pooled memory that may already carry another request's bytes. A request received
     * whole is appended even if its client has gone (its outcome is unknown to the client, like any commit in flight
     * at a disconnect). Later requests of the connection wait until this one is answered, so that their appends cannot
     * overtake it in the log (HttpConnection).
     */
    private void waitForSegment(Exchange ex, Runnable append) {
        io.netty.handler.codec.http.FullHttpRequest request = ex.request().retain();
        ex.holdLaterRequests();
        pendingAppends.incrementAndGet();
        try {
            segmentWaits.execute(() -> {
                try {
                    append.run();
                } catch (RuntimeException e) {
                    ApiErrors.answer(ex, e);
                } finally {
                    request.release();
                    pendingAppends.decrementAndGet();
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            request.release();
            pendingAppends.decrementAndGet();
            ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "shutting_down", "the server is stopping");
        }
    }

    /** Appends handed to the segment-wait thread and not yet done with their request's body. */
    public int pendingAppends() {
        return pendingAppends.get();
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
        Durability level = durability(ex);
        int type = type(ex);
        ByteBuf body = ex.request().content();
        int count = countBatch(ex, body);
        if (count < 0) {
            return; // refused, answered
        }
        appendBatch(ex, body, type, level, compression(ex), count, 0, body.readerIndex(), new ArrayList<>(count), false);
    }

    /**
     * Appends records {@code from} to {@code count - 1} of a validated batch body starting at byte {@code at}. On an
     * event loop ({@code mayWait} false) a record that needs a segment not prepared yet hands the rest of the batch
     * to a thread that may wait.
     */
    private void appendBatch(Exchange ex, ByteBuf body, int type, Durability level, Compression compression, int count,
                             int from, int at, List<String> lsns, boolean mayWait) {
        CompletableFuture<Long> last = null;
        for (int i = from; i < count; i++) {
            int length = (int) body.getUnsignedInt(at);
            boolean isLast = i == count - 1;
            Durability recordLevel = isLast ? level : Durability.OFF;
            ByteBuffer payload = body.nioBuffer(at + 4, length);
            try {
                CompletableFuture<Long> f = mayWait ? wal.appendAsync(type, payload, recordLevel, compression)
                        : wal.tryAppendAsync(type, payload, recordLevel, compression);
                if (f == null) {
                    int index = i;
                    int position = at;
                    waitForSegment(ex, () -> appendBatch(ex, body, type, level, compression, count, index, position, lsns, true));
                    return;
                }
                if (!isLast) {
                    lsns.add(Lsn.format(f.join())); // OFF futures are complete on return
                }
                last = f;
            } catch (RuntimeException e) {
                answerPartialBatch(ex, e, lsns);
                releaseIfOnLoop(ex);
                return;
            }
            at += 4 + length;
        }
        releaseIfOnLoop(ex);
        last.whenComplete((lsn, error) -> { // the answer goes to the connection's event loop from wherever this runs
            if (error != null) {
                ApiErrors.answer(ex, error);
                return;
            }
            lsns.add(Lsn.format(lsn));
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("lsns", lsns);
            out.put("durability", level.configName());
            ex.json(HttpResponseStatus.OK, out);
        });
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
    private int countBatch(Exchange ex, ByteBuf body) {
        int max = wal.config().maxPayloadSize();
        int count = 0;
        long charged = 0;
        for (int at = body.readerIndex(); at < body.writerIndex(); ) {
            if (body.writerIndex() - at < 4) {
                throw new IllegalArgumentException("batch body: " + (body.writerIndex() - at)
                        + " trailing bytes where a 4-byte length was expected (record " + count + ")");
            }
            long length = body.getUnsignedInt(at);
            at += 4;
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
                        : "the batch exceeds max-batch-bytes (" + maxBatchBytes + ") counting " + RECORD_OVERHEAD
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

    /** GET /v1/records?from=|cursor=&limit=&wait_ms=&visibility= */
    void read(Exchange ex) {
        int limit = intParam(ex, "limit", 100, 1, MAX_LIMIT);
        long waitMs = intParam(ex, "wait_ms", 0, 0, (int) MAX_WAIT_MS);
        WalReader.Visibility visibility = visibility(ex);
        open(ex, () -> wal.reader(start(ex, wal.oldestLsn()), visibility), reader -> {
            List<Map<String, Object>> records = new ArrayList<>();
            try (reader) {
                WalRecord r = reader.next();
                if (r == null && waitMs > 0) {
                    r = reader.poll(waitMs, TimeUnit.MILLISECONDS);
                }
                long bytes = 0;
                while (r != null) {
                    records.add(recordJson(r));
                    bytes += 64 + (r.size() + 2L) / 3 * 4; // base64 and the JSON around it
                    r = records.size() < limit && bytes < maxResponseBytes ? reader.next() : null;
                }
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("records", records);
                out.put("next", Lsn.format(reader.position()));
                ex.json(HttpResponseStatus.OK, out);
            }
        });
    }

    /** GET /v1/records/stream?from=&visibility= : NDJSON over chunked transfer, one record per line, until the client goes (or half-closes). */
    void stream(Exchange ex) {
        WalReader.Visibility visibility = visibility(ex);
        open(ex, () -> wal.reader(start(ex, wal.insertLsn()), visibility), reader -> {
            ex.markStreaming();
            var channel = ex.ctx().channel();
            HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            head.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/x-ndjson");
            head.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
            channel.writeAndFlush(head);
            try (reader) {
                while (channel.isActive() && !stopping && !ex.streamEndRequested()) {
                    WalRecord r = reader.poll(500, TimeUnit.MILLISECONDS);
                    if (r == null) {
                        continue;
                    }
                    byte[] line = (Exchange.JSON.writeValueAsString(recordJson(r)) + "\n").getBytes(StandardCharsets.UTF_8);
                    channel.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(line)));
                    long stalledSince = System.nanoTime();
                    while (!channel.isWritable() && channel.isActive()) {
                        // The client reads slowly: wait rather than buffer without bound, but not forever: a client
                        // that stopped reading (or vanished without a FIN) must not hold this reader thread for good.
                        if (System.nanoTime() - stalledSince > streamWriteTimeoutNanos) {
                            LOG.warn("Closing the stream to {}: it took nothing for {} ms (stream-write-timeout-ms)",
                                    channel.remoteAddress(), TimeUnit.NANOSECONDS.toMillis(streamWriteTimeoutNanos));
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

    /** Where a read starts: {@code ?from=}, or the LSN of cursor {@code ?cursor=} (404 when unknown), else {@code otherwise}. */
    private long start(Exchange ex, long otherwise) {
        String from = ex.param("from");
        String cursor = ex.param("cursor");
        if (from != null && cursor != null) {
            throw new IllegalArgumentException("give from or cursor, not both");
        }
        return cursor != null ? wal.cursors().position(cursor) : from != null ? Lsn.parse(from) : otherwise;
    }

    @FunctionalInterface
    private interface Work {
        void run() throws Exception;
    }

    @FunctionalInterface
    private interface ReaderWork {
        void run(WalReader reader) throws Exception;
    }

    /**
     * Opens the reader a request asks for and hands it to a reader thread. From an LSN it is opened on the event loop
     * (it validates the LSN at once: 410, 400). From a cursor on a replica, finding the cursor's LSN may wait for the
     * cursors' lock while the receiver applies control records, so the reader thread opens it instead.
     */
    private void open(Exchange ex, java.util.function.Supplier<WalReader> opener, ReaderWork work) {
        if (ex.param("cursor") != null && wal.appendsRefusedReason() != null) {
            submit(ex, null, () -> {
                WalReader reader = opener.get();
                work.run(reader);
            });
            return;
        }
        WalReader reader = opener.get();
        submit(ex, reader, () -> work.run(reader));
    }

    private void submit(Exchange ex, WalReader reader, Work work) {
        try {
            readers.execute(() -> {
                try {
                    work.run();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    ApiErrors.answer(ex, e);
                } catch (Exception e) {
                    ApiErrors.answer(ex, e);
                }
            });
        } catch (RejectedExecutionException e) {
            if (reader != null) {
                reader.close();
            }
            if (stopping) {
                ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "shutting_down", "the server is stopping");
            } else {
                ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "too_many_readers",
                        "every reader slot is busy (max-readers); retry shortly");
            }
        }
    }

    private static Map<String, Object> recordJson(WalRecord r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("lsn", Lsn.format(r.lsn()));
        m.put("type", r.type());
        m.put("data", Base64.getEncoder().encodeToString(r.payload()));
        return m;
    }

    /** {@code ?durability=}, matched in place (no decoding, no copy) unless it is unusual; the log's default if absent. */
    private Durability durability(Exchange ex) {
        long span = ex.paramSpan("durability");
        if (span < 0) {
            return wal.config().durability();
        }
        int start = (int) (span >>> 32);
        int length = (int) span - start;
        for (Durability d : LEVELS) {
            String name = d.configName();
            if (name.length() == length && ex.uri().regionMatches(true, start, name, 0, length)) {
                return d;
            }
        }
        return Durability.parse(ex.param("durability")); // decoded, or refused with the list of levels
    }

    private static final Durability[] LEVELS = Durability.values();

    /** {@code ?compression=} (none, lz4, zstd); the log's default if absent. */
    private Compression compression(Exchange ex) {
        if (ex.paramSpan("compression") < 0) {
            return wal.config().compression();
        }
        return Compression.parse(ex.param("compression")); // or refused: 400 bad_parameter
    }

    /** {@code ?type=} (0 to 65535), read in place when it is plain digits; 0 if absent. */
    private static int type(Exchange ex) {
        long span = ex.paramSpan("type");
        if (span < 0) {
            return 0;
        }
        int start = (int) (span >>> 32);
        int end = (int) span;
        int value = 0;
        for (int i = start; i < end && end - start <= 5; i++) {
            char c = ex.uri().charAt(i);
            if (c < '0' || c > '9') {
                return intParam(ex, "type", 0, 0, 65535); // decoded, or refused with a clear error
            }
            value = value * 10 + (c - '0');
        }
        return end > start && end - start <= 5 && value <= 65535 ? value : intParam(ex, "type", 0, 0, 65535);
    }

    private static WalReader.Visibility visibility(Exchange ex) {
        String v = ex.param("visibility");
        if (v == null || v.equalsIgnoreCase("flushed")) {
            return WalReader.Visibility.FLUSHED;
        }
        if (v.equalsIgnoreCase("written")) {
            return WalReader.Visibility.WRITTEN;
        }
        throw new IllegalArgumentException("visibility must be written or flushed, got '" + v + "'");
    }

    static int intParam(Exchange ex, String name, int defaultValue, int min, int max) {
        String v = ex.param(name);
        if (v == null) {
            return defaultValue;
        }
        try {
            int n = Integer.parseInt(v.trim());
            if (n < min || n > max) {
                throw new IllegalArgumentException(name + " must be from " + min + " to " + max + ", got " + n);
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a whole number, got '" + v + "'", e);
        }
    }
}
