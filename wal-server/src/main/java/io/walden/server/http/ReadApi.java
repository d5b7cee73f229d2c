package io.walden.server.http;

import io.netty.buffer.ByteBuf;
import io.walden.core.Lsn;
import io.walden.core.RecordTime;
import io.walden.core.Wal;
import io.walden.core.WalReader;
import io.walden.core.WalRecord;

import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code GET /v1/records}: reads a page of records from an LSN or a cursor, long-polling for the first when asked.
 *
 * <p>Thread-safety: stateless beyond the log and its helpers; {@link #read} runs on an event loop, the read itself
 * on a reader thread.
 */
final class ReadApi {
    static final int MAX_LIMIT = 10_000;
    static final long MAX_WAIT_MS = 60_000;

    private final Wal wal;
    private final RecordParams params;
    private final ReaderPool pool;
    private final long maxResponseBytes;

    ReadApi(Wal wal, RecordParams params, ReaderPool pool, long maxResponseBytes) {
        this.wal = wal;
        this.params = params;
        this.pool = pool;
        this.maxResponseBytes = maxResponseBytes;
    }

    /** GET /v1/records?from=|cursor=&limit=&wait_ms=&visibility= */
    void read(Exchange ex) {
        int limit = RecordParams.intParam(ex, "limit", 100, 1, MAX_LIMIT);
        long waitMs = RecordParams.intParam(ex, "wait_ms", 0, 0, (int) MAX_WAIT_MS);
        WalReader.Visibility visibility = RecordParams.visibility(ex);
        boolean frames = RecordFrames.wanted(ex, "application/json");
        pool.open(ex, () -> wal.reader(params.start(ex, wal.oldestLsn()), visibility), reader -> {
            if (frames) {
                readFrames(ex, reader, limit, waitMs);
                return;
            }
            List<Map<String, Object>> records = new ArrayList<>();
            try (reader) {
                page(reader, limit, waitMs, r -> {
                    records.add(recordJson(r));
                    return 64 + (r.size() + 2L) / 3 * 4; // base64 and the JSON around it
                });
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("records", records);
                out.put("next", Lsn.format(reader.position()));
                ex.negotiatedJson(out);
            }
        });
    }

    /**
     * The page as binary frames (RecordFrames), {@code next} in a header. The same records as the JSON page when the
     * limit ends the page; when the answer's size cap ends it, frames (no base64) fit more records.
     */
    private void readFrames(Exchange ex, WalReader reader, int limit, long waitMs) throws Exception {
        ByteBuf out = ex.ctx().alloc().buffer();
        String next;
        try (reader) {
            page(reader, limit, waitMs, r -> {
                RecordFrames.write(out, r);
                return RecordFrames.size(r);
            });
            next = Lsn.format(reader.position());
        } catch (Exception | Error e) {
            out.release(); // still ours: the answer below takes it only once the reader is closed
            throw e;
        }
        ex.frames(out, next);
    }

    /** Where a page's records go; returns what the record adds to the answer, in bytes. */
    @FunctionalInterface
    private interface PageSink {
        long take(WalRecord r) throws Exception;
    }

    /**
     * One page: the first record (long-polling up to {@code waitMs} for it when there is none yet), then more while
     * the page holds fewer than {@code limit} records and fewer bytes than the answer may carry (always at least one).
     */
    private void page(WalReader reader, int limit, long waitMs, PageSink sink) throws Exception {
        WalRecord r = reader.next();
        if (r == null && waitMs > 0) {
            r = reader.poll(waitMs, TimeUnit.MILLISECONDS);
        }
        long bytes = 0;
        int n = 0;
        while (r != null) {
            bytes += sink.take(r);
            n++;
            r = n < limit && bytes < maxResponseBytes ? reader.next() : null;
        }
    }

    /** The record as reads and streams show it. */
    static Map<String, Object> recordJson(WalRecord r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("lsn", Lsn.format(r.lsn()));
        m.put("type", r.type());
        m.put("time", r.timestamp() == null ? null : RecordTime.format(r.timestamp())); // null: written before format 2
        m.put("data", Base64.getEncoder().encodeToString(r.payload()));
        return m;
    }
}
