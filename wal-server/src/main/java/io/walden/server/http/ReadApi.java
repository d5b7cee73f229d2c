package io.walden.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.walden.core.Lsn;
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
        boolean frames = RecordFrames.wanted(ex);
        pool.open(ex, () -> wal.reader(params.start(ex, wal.oldestLsn()), visibility), reader -> {
            if (frames) {
                readFrames(ex, reader, limit, waitMs);
                return;
            }
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

    /** The page as binary frames (RecordFrames), {@code next} in a header: the same records as the JSON page. */
    private void readFrames(Exchange ex, WalReader reader, int limit, long waitMs) throws Exception {
        ByteBuf out = ex.ctx().alloc().buffer();
        try (reader) {
            WalRecord r = reader.next();
            if (r == null && waitMs > 0) {
                r = reader.poll(waitMs, TimeUnit.MILLISECONDS);
            }
            int n = 0;
            while (r != null) {
                RecordFrames.write(out, r);
                n++;
                r = n < limit && out.readableBytes() < maxResponseBytes ? reader.next() : null;
            }
            ex.frames(out, Lsn.format(reader.position()));
        } catch (Exception | Error e) {
            out.release();
            throw e;
        }
    }

    /** The record as reads and streams show it. */
    static Map<String, Object> recordJson(WalRecord r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("lsn", Lsn.format(r.lsn()));
        m.put("type", r.type());
        m.put("data", Base64.getEncoder().encodeToString(r.payload()));
        return m;
    }
}
