package io.walden.server.admin;

import io.walden.core.Cursors;
import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.core.WalStatus;
import io.walden.server.config.PerLogSettings;
import io.walden.server.http.CursorApi;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A log as {@code GET /v1/logs} lists it and {@code GET /v1/logs/{log}} describes it (docs/http-api.md, "Logs"). Field
 * names are a contract, shared with {@code /admin/status} where they mean the same.
 *
 * <p>Thread-safety: stateless; every figure is read from the log's own thread-safe views (a moment's picture).
 */
public final class LogDescriptions {
    private LogDescriptions() {
    }

    /** What the list shows of a log: its positions, the bytes it keeps, its append rate. */
    public static Map<String, Object> summary(String name, Wal wal, AppendRates rates) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        WalStatus st = wal.status();
        m.put("insert_lsn", Lsn.format(wal.insertLsn()));
        m.put("flushed_lsn", Lsn.format(wal.flushedLsn()));
        m.put("oldest_lsn", Lsn.format(wal.oldestLsn()));
        m.put("bytes", st.retainedBytes());
        m.put("segments", st.segmentCount());
        m.put("append_rate", Math.round(rates.rate(name) * 10) / 10.0);
        m.put("failed", st.isFailed());
        return m;
    }

    /**
     * The summary, with every setting in force ({@link PerLogSettings}), retention and its holders, its archive's
     * progress, and the cursors.
     *
     * @param replicated whether the log is replicated (the log {@code default}), for clients to see which are not
     */
    public static Map<String, Object> describe(String name, Wal wal, AppendRates rates, boolean replicated) {
        Map<String, Object> m = summary(name, wal, rates);
        m.put("written_lsn", Lsn.format(wal.writtenLsn()));
        m.put("log_id", String.format("%016x", wal.status().logId()));
        m.put("replicated", replicated);
        m.put("settings", PerLogSettings.describe(wal.config()));
        m.put("retention", StatusReport.retention(wal.status().retention()));
        m.put("archive", wal.status().archiver().map(StatusReport::archive).orElse(null)); // null: not archived
        List<Map<String, Object>> cursors = new ArrayList<>();
        for (Cursors.Cursor c : wal.cursors().list()) {
            cursors.add(CursorApi.json(c));
        }
        m.put("cursors", cursors);
        return m;
    }
}
