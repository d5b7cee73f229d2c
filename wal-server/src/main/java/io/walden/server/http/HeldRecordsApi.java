package io.walden.server.http;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.walden.core.EpochHistory;
import io.walden.core.Lsn;
import io.walden.core.ReplicationChunk;
import io.walden.core.Wal;
import io.walden.server.config.ServerConfig;

import java.util.Map;
import java.util.concurrent.ExecutorService;

/**
 * {@code GET /admin/held-records?log=NAME&from=LSN&to=LSN&epoch=N} (docs/http-api.md, docs/operations.md "When no
 * member holds every log"): a replica group's member serves the raw bytes of the records of one log it holds flushed in
 * {@code [from, to)}, to another member that lacks them and copies them before it is elected. Whole records, verbatim
 * as in its segment files (each record's CRC and prev link in them: the copying member checks every one as a replica
 * checks what its primary sends), within one segment and at most {@value #MAX_BYTES} bytes per answer: the member asks
 * again from where the answer ended ({@value #NEXT_HEADER}) until it reaches {@code to}.
 *
 * <p>Served only while the member follows no primary (its log's end is final) and only records written in epoch
 * {@code epoch} (the copying member's own: one primary sent both members the same bytes in one epoch; another epoch's may
 * differ). The bytes are read past a replica's read limit ({@code ReplicatedLog.readHeld}).
 *
 * <p>Thread-safety: stateless; each read runs on the admin thread (it copies up to a chunk out of a segment file).
 */
public final class HeldRecordsApi {
    /** Where the answer's bytes start (a record boundary; past the segment header when {@code from} ended a segment). */
    public static final String START_HEADER = "Walden-Start-Lsn";
    /** Where to ask from next. */
    public static final String NEXT_HEADER = "Walden-Next-Lsn";
    /** The route's path. */
    public static final String PATH = "/admin/held-records";
    /** The most bytes one answer holds (a copying member refuses a longer one). */
    public static final int MAX_BYTES = 1 << 20;

    /** A group member's logs as it may serve them now. */
    @FunctionalInterface
    public interface Source {
        /**
         * The log named {@code name} ({@code default} or a named log), or null when this member holds none of that name.
         *
         * @throws IllegalStateException when this member may not serve its logs' tails now (the message says why)
         */
        Wal heldLog(String name);
    }

    /** The member's logs, or null on a server outside a replica group. */
    private final Source source;
    private final ExecutorService admin;

    public HeldRecordsApi(Source source, ExecutorService admin) {
        this.source = source;
        this.admin = admin;
    }

    void serve(Exchange ex) {
        String log = ex.param("log") == null ? ServerConfig.DEFAULT_LOG : ex.param("log");
        long from = Lsn.parse(required(ex, "from"));
        long to = Lsn.parse(required(ex, "to"));
        int epoch = epoch(required(ex, "epoch"));
        if (source == null) {
            ex.error(HttpResponseStatus.CONFLICT, "not_coordinated", "this server is not a member of a replica group "
                    + "(--coordinator): only a group's members copy each other's records");
            return;
        }
        ApiErrors.offLoop(admin, ex, () -> {
            Wal wal;
            try {
                wal = source.heldLog(log);
            } catch (IllegalStateException e) {
                ex.error(HttpResponseStatus.CONFLICT, "not_looking", e.getMessage());
                return;
            }
            if (wal == null) {
                ex.error(HttpResponseStatus.NOT_FOUND, "log_not_found", "this member holds no log named '" + log + "'");
                return;
            }
            ReplicationChunk chunk = wal.replication().readHeld(from, to, MAX_BYTES);
            try {
                source.heldLog(log); // still following no primary now that the bytes are read: else its end may move
            } catch (IllegalStateException e) {
                ex.error(HttpResponseStatus.CONFLICT, "not_looking", e.getMessage());
                return;
            }
            if (chunk == null) {
                ex.text(HttpResponseStatus.NO_CONTENT, "", "text/plain");
                return;
            }
            EpochHistory history = wal.status().history();
            int first = history.at(chunk.startLsn() + 1).number(); // the epoch of the record starting there
            int last = history.at(chunk.endLsn()).number(); // the epoch of the record ending there
            if (first != epoch || last != epoch) {
                ex.error(HttpResponseStatus.CONFLICT, "other_epoch", "the records of log '" + log + "' from "
                        + Lsn.format(chunk.startLsn()) + " are in epoch " + first + (last == first ? "" : " to " + last)
                        + " on this member, not " + epoch + ": another epoch's records may differ, and are never copied");
                return;
            }
            ex.binary(Unpooled.wrappedBuffer(chunk.bytes()), "application/octet-stream",
                    Map.of(START_HEADER, Lsn.format(chunk.startLsn()), NEXT_HEADER, Lsn.format(chunk.nextLsn())));
        }, "shutting_down", "the server is stopping");
    }

    private static int epoch(String text) {
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("epoch must be an epoch's number, not '" + text + "'");
        }
    }

    private static String required(Exchange ex, String name) {
        String v = ex.param(name);
        if (v == null) {
            throw new IllegalArgumentException(name + " is required: GET " + PATH + "?log=NAME&from=LSN&to=LSN&epoch=N");
        }
        return v;
    }
}
