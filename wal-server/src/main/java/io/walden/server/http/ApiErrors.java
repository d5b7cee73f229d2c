package io.walden.server.http;

import io.netty.handler.codec.http.HttpResponseStatus;
import io.walden.core.AppendsBlockedException;
import io.walden.core.AppendsRefusedException;
import io.walden.core.CursorBackwardsException;
import io.walden.core.IllegalLsnException;
import io.walden.core.Lsn;
import io.walden.core.LsnRemovedException;
import io.walden.core.PayloadTooLargeException;
import io.walden.core.RemoteCommitTimeoutException;
import io.walden.core.RemoteCommitUnconfirmedException;
import io.walden.core.UnknownCursorException;
import io.walden.core.WalClosedException;
import io.walden.core.WalCorruptedException;
import io.walden.core.WalException;
import io.walden.core.WalFailedException;
import io.walden.server.logging.Units;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletionException;

/** Maps Walden's exceptions to HTTP answers, one place for every endpoint (docs/http-api.md lists them). */
final class ApiErrors {
    private static final Logger LOG = LoggerFactory.getLogger(ApiErrors.class);

    private ApiErrors() {
    }

    static void answer(Exchange ex, Throwable t) {
        Throwable e = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
        if (e instanceof PayloadTooLargeException tooLarge) {
            // The log's own message names its Java setting; a server's user sets no such thing (segment-size and
            // wal-buffers only lower the limit): the limit, in the units a setting takes.
            ex.error(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "payload_too_large", "payload of " + tooLarge.size()
                    + " bytes is over the largest a record may hold, " + Units.size(tooLarge.max()) + "; nothing was written");
        } else if (e instanceof LsnRemovedException) {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("error", "lsn_removed");
            body.put("detail", ex.redact(e.getMessage()));
            body.put("oldest_lsn", Lsn.format(((LsnRemovedException) e).oldest()));
            ex.json(HttpResponseStatus.GONE, body);
        } else if (e instanceof UnknownCursorException) {
            ex.error(HttpResponseStatus.NOT_FOUND, "unknown_cursor", e.getMessage());
        } else if (e instanceof CursorBackwardsException backwards) {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("error", "cursor_backwards");
            body.put("detail", e.getMessage());
            body.put("lsn", Lsn.format(backwards.current()));
            ex.json(HttpResponseStatus.CONFLICT, body);
        } else if (e instanceof IllegalLsnException || e instanceof IllegalArgumentException) {
            ex.error(HttpResponseStatus.BAD_REQUEST, "bad_parameter", e.getMessage());
        } else if (e instanceof AppendsBlockedException) {
            ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "appends_blocked", e.getMessage());
        } else if (e instanceof AppendsRefusedException) {
            ex.error(HttpResponseStatus.CONFLICT, "replica", e.getMessage());
        } else if (e instanceof RemoteCommitUnconfirmedException) {
            // The record is durable locally: say so, and where it is, so that a client does not append it twice.
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("error", e instanceof RemoteCommitTimeoutException ? "remote_commit_timeout"
                    : "remote_commit_unconfirmed");
            body.put("detail", ex.redact(e.getMessage()));
            body.put("lsn", Lsn.format(((RemoteCommitUnconfirmedException) e).lsn()));
            ex.json(HttpResponseStatus.SERVICE_UNAVAILABLE, body);
        } else if (e instanceof WalFailedException) {
            ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "log_failed", e.getMessage());
        } else if (e instanceof WalClosedException) {
            ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "shutting_down", e.getMessage());
        } else if (e instanceof WalCorruptedException) {
            ex.error(HttpResponseStatus.INTERNAL_SERVER_ERROR, "corrupt", e.getMessage());
        } else if (e instanceof WalException) {
            ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "unavailable", e.getMessage());
        } else {
            // Not one of the log's answers: a defect of the server, which the log must show with where it happened.
            LOG.warn("Answered 500 internal: {}", e.toString(), e);
            ex.error(HttpResponseStatus.INTERNAL_SERVER_ERROR, "internal", String.valueOf(e));
        }
    }
}
