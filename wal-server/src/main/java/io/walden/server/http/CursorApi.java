package io.walden.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.walden.core.Cursors;
import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.server.logs.LogCatalog;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.function.UnaryOperator;

/**
 * Named consumer cursors over HTTP (docs/http-api.md, "Cursors"): {@code PUT}, {@code GET} and {@code DELETE
 * /v1/cursors/{name}}, {@code GET /v1/cursors}. A change waits for its durability, so every call runs on a reader
 * thread ({@code max-readers}), never on the event loop.
 *
 * <p>Thread-safety: stateless beyond the log it serves.
 */
public final class CursorApi {
    private final Wal wal;
    private final ExecutorService workers;
    private final UnaryOperator<Runnable> changes;

    public CursorApi(Wal wal, ExecutorService workers) {
        this(wal, workers, work -> work);
    }

    /**
     * @param changes what a cursor's change runs inside, on its worker: a named log's keeps its deletion from passing
     *                between the check for cursors that hold it and the deletion ({@link LogCatalog#delete})
     */
    CursorApi(Wal wal, ExecutorService workers, UnaryOperator<Runnable> changes) {
        this.wal = wal;
        this.workers = workers;
        this.changes = changes;
    }

    /** GET /v1/cursors: every cursor, with its lag. */
    void list(Exchange ex) {
        offLoop(ex, () -> {
            List<Map<String, Object>> out = new ArrayList<>();
            for (Cursors.Cursor c : wal.cursors().list()) {
                out.add(json(c));
            }
            ex.json(HttpResponseStatus.OK, Map.of("cursors", out));
        });
    }

    /** PUT /v1/cursors/{name} with {@code {"lsn":"X/Y"}}: creates the cursor, or moves it forward. */
    void set(Exchange ex) {
        String name = name(ex);
        long lsn = lsnOf(ex);
        offLoop(ex, changes.apply(() -> {
            wal.cursors().set(name, lsn);
            ex.json(HttpResponseStatus.OK, Map.of("name", name, "lsn", Lsn.format(wal.cursors().position(name))));
        }));
    }

    /** GET /v1/cursors/{name}. */
    void get(Exchange ex) {
        String name = name(ex);
        offLoop(ex, () -> {
            long lsn = wal.cursors().position(name);
            ex.json(HttpResponseStatus.OK, Map.of("name", name, "lsn", Lsn.format(lsn)));
        });
    }

    /** DELETE /v1/cursors/{name}. */
    void delete(Exchange ex) {
        String name = name(ex);
        offLoop(ex, changes.apply(() -> {
            wal.cursors().delete(name);
            ex.text(HttpResponseStatus.NO_CONTENT, "", "text/plain");
        }));
    }

    /**
     * The cursor a {@code /v1/cursors/{name}} route names, decoded and checked before anything else is (its body, the
     * cursor itself): a name no cursor can have is a 400 on every route, never a 404 on some.
     */
    private static String name(Exchange ex) {
        String name = Route.name(ex);
        Cursors.checkName(name);
        return name;
    }

    /** The cursor as {@code /v1/cursors} and {@code /admin/status} show it. */
    public static Map<String, Object> json(Cursors.Cursor c) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", c.name());
        m.put("lsn", Lsn.format(c.lsn()));
        m.put("lag_bytes", c.lagBytes());
        // null, not 0, when unknown (a record written before format 2): Math.round(NaN) would say "caught up"
        m.put("lag_seconds", Double.isNaN(c.lagSeconds()) ? null : Math.round(c.lagSeconds() * 10) / 10.0);
        m.put("lost", c.lost());
        return m;
    }

    /** The body {@code {"lsn":"X/Y"}} (or a decimal LSN). */
    private static long lsnOf(Exchange ex) {
        JsonNode body;
        try {
            body = Exchange.JSON.readTree(ex.request().content().toString(StandardCharsets.UTF_8));
        } catch (Exception e) {
            throw new IllegalArgumentException("the body must be JSON: {\"lsn\":\"X/Y\"}");
        }
        JsonNode lsn = body == null ? null : body.get("lsn");
        if (lsn == null || !(lsn.isTextual() || lsn.canConvertToLong())) {
            throw new IllegalArgumentException("the body must name the cursor's LSN: {\"lsn\":\"X/Y\"}");
        }
        return Lsn.parse(lsn.asText());
    }

    private void offLoop(Exchange ex, Runnable work) {
        ApiErrors.offLoop(workers, ex, work, "too_many_readers", "every reader slot is busy (max-readers); retry shortly");
    }
}
