package io.walden.server.http;

import io.micrometer.core.instrument.MeterRegistry;
import io.walden.core.Wal;

import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;

/**
 * The data API (docs/http-api.md): append one record ({@link AppendApi}) or a batch ({@link BatchApi}), read records
 * (long-polling, {@link ReadApi}), stream them ({@link StreamApi}). Wires the handlers to the helpers they share.
 *
 * <p>Appends run on the connection's event loop (a copy into the WAL buffers) and are answered by whoever makes
 * them durable: no thread waits per request, and requests from many connections are group-committed together.
 * Reads block (they may long-poll), so they run on a bounded pool; when it is full the request gets 503 rather than
 * a queue that grows without bound.
 *
 * <p>Thread-safety: the handlers run on the connections' event loops (and hand blocking work to reader threads or
 * the segment-wait thread); {@link #stop} and {@link #pendingAppends} may be called from any thread.
 */
public final class DataApi {
    /** What every log's data API shares: the threads, the waits for a segment, the limits, the latency meters. */
    private record Shared(ExecutorService readers, SegmentWaits segmentWaits, CommitLatency latency, long maxBatchBytes,
                          int maxBatchRecords, long streamWriteTimeoutMillis, boolean flushOnEventLoop,
                          boolean fineTimers) {
    }

    private final Shared shared;
    private final Wal wal;
    private final ReaderPool readers;
    private final AppendApi appends;
    private final BatchApi batches;
    private final ReadApi reads;
    private final StreamApi streams;

    /**
     * @param maxBatchBytes   the largest batch, counting {@code BatchApi.RECORD_OVERHEAD} bytes per record (also the
     *                        largest read answer)
     * @param maxBatchRecords the most records one batch may hold
     * @param streamWriteTimeoutMillis how long a stream may stay unable to write before it is closed
     * @param segmentWaits    runs appends that must wait for the next segment to be prepared (off the event loops)
     * @param flushOnEventLoop whether an event loop flushes its own batch of durable appends when no flush is in
     *                         progress (no thread hand-off for a lone request), or always leaves it to the writer
     * @param fineTimers       whether the event loops' timers fire to the microsecond, so that a loop may put its
     *                         flush off while its siblings' appends arrive ({@link LoopFlush})
     * @param registry         where the appends' commit latency goes ({@code walden.commit.latency})
     */
    public DataApi(Wal wal, ExecutorService readers, long maxBatchBytes, int maxBatchRecords, long streamWriteTimeoutMillis,
                   Executor segmentWaits, boolean flushOnEventLoop, boolean fineTimers, MeterRegistry registry) {
        this(wal, new Shared(readers, new SegmentWaits(segmentWaits), new CommitLatency(registry), maxBatchBytes,
                maxBatchRecords, streamWriteTimeoutMillis, flushOnEventLoop, fineTimers));
    }

    private DataApi(Wal wal, Shared shared) {
        this.shared = shared;
        this.wal = wal;
        RecordParams params = new RecordParams(wal);
        this.readers = new ReaderPool(wal, shared.readers());
        LoopFlush loopFlush = new LoopFlush(wal, shared.flushOnEventLoop(), shared.fineTimers());
        this.appends = new AppendApi(wal, params, shared.segmentWaits(), loopFlush, shared.latency());
        this.batches = new BatchApi(wal, params, shared.segmentWaits(), loopFlush, shared.latency(),
                shared.maxBatchBytes(), shared.maxBatchRecords());
        this.reads = new ReadApi(wal, params, this.readers, shared.maxBatchBytes());
        this.streams = new StreamApi(wal, params, this.readers, shared.streamWriteTimeoutMillis());
    }

    /** The log this API serves. */
    Wal wal() {
        return wal;
    }

    /**
     * The data API of another log, sharing this one's threads, limits and meters (so {@link #pendingAppends} counts
     * every log's); its {@link #stop} ends only its own streams.
     */
    public DataApi forLog(Wal other) {
        return new DataApi(other, shared);
    }

    /**
     * Runs {@code task} where it may wait (the segment-wait thread), holding the request's body until it is done, as
     * an append that waits for a segment is (a log created by an append to it: {@code --auto-create-logs}).
     */
    void offLoop(Exchange ex, Runnable task) {
        shared.segmentWaits().submit(ex, task);
    }

    /** Ends the streams (at their next poll, within half a second); a read refused from now on is told the server is stopping. */
    public void stop() {
        readers.stop();
    }

    /** Appends handed to the segment-wait thread and not yet done with their request's body. */
    public int pendingAppends() {
        return shared.segmentWaits().pending();
    }

    void append(Exchange ex) {
        appends.append(ex);
    }

    void batch(Exchange ex) {
        batches.batch(ex);
    }

    void read(Exchange ex) {
        reads.read(ex);
    }

    void stream(Exchange ex) {
        streams.stream(ex);
    }
}
