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
import io.walden.server.logs.LogRefusedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.UnaryOperator;

/** Maps Walden's exceptions to HTTP answers, one place for every endpoint (docs/http-api.md lists them). */
final class ApiErrors {
    private static final Logger LOG = LoggerFactory.getLogger(ApiErrors.class);

    private ApiErrors() {
    }

    /** An error as the API says it: its status and its {@code Error} object (docs/http-api.md, "Errors"). */
    record Described(HttpResponseStatus status, Map<String, Object> body) {
        String code() {
            return (String) body.get("error");
        }

        String detail() {
            return (String) body.get("detail");
        }
    }

    /**
     * Runs a handler's work on {@code executor} (off the event loop), answering what it throws as its error, and a
     * refusal of the executor (full, or stopping) as 503 {@code refusedCode}.
     */
    static void offLoop(Executor executor, Exchange ex, Runnable work, String refusedCode, String refusedDetail) {
        try {
            executor.execute(() -> {
                try {
                    work.run();
                } catch (Throwable e) {
                    answer(ex, e);
                }
            });
        } catch (RejectedExecutionException e) {
            ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, refusedCode, refusedDetail);
        }
    }

    /** Answers the request with {@code t} as its error. */
    static void answer(Exchange ex, Throwable t) {
        Described d = describe(ex, t);
        ex.json(d.status(), d.body());
    }

    /**
     * {@code t} as the API says it to {@code ex}: as {@link #describe(Throwable, UnaryOperator)}, except that a named
     * log closing while the server runs (reopened with new settings by a PATCH, or deleted) is {@code log_closed}, not
     * {@code shutting_down}, which tells a client to go to another server. The one rule for every answer and every
     * stream's last line.
     */
    static Described describe(Exchange ex, Throwable t) {
        Throwable e = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
        if (e instanceof WalClosedException && namesALog(ex)) {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("error", "log_closed");
            body.put("detail", "log '" + Route.log(ex) + "' closed as this request was served: it is being reopened "
                    + "with new settings (retry) or was deleted (then 404)");
            return new Described(HttpResponseStatus.SERVICE_UNAVAILABLE, body);
        }
        return describe(t, ex::redact);
    }

    /**
     * {@code t} as the API says it, its detail passed through {@code redact} (file names stay, the server's paths go).
     * An exception that is none of the log's answers is a defect of the server: logged here with its stack trace.
     */
    static Described describe(Throwable t, UnaryOperator<String> redact) {
        Throwable e = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
        if (e instanceof PayloadTooLargeException tooLarge) {
            // The log's own message names its Java setting; a server's user sets no such thing (segment-size and
            // wal-buffers only lower the limit): the limit, in the units a setting takes.
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("error", "payload_too_large");
            body.put("detail", "payload of " + tooLarge.size() + " bytes is over the largest a record may hold, "
                    + Units.size(tooLarge.max()) + "; nothing was written");
            return new Described(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, body);
        } else if (e instanceof LogRefusedException refused) {
            return error(HttpResponseStatus.valueOf(refused.reason().status()), refused.reason().code(), e, redact);
        } else if (e instanceof LsnRemovedException removed) {
            return error(HttpResponseStatus.GONE, "lsn_removed", e, redact, "oldest_lsn", Lsn.format(removed.oldest()));
        } else if (e instanceof UnknownCursorException) {
            return error(HttpResponseStatus.NOT_FOUND, "unknown_cursor", e, redact);
        } else if (e instanceof CursorBackwardsException backwards) {
            return error(HttpResponseStatus.CONFLICT, "cursor_backwards", e, redact, "lsn", Lsn.format(backwards.current()));
        } else if (e instanceof IllegalLsnException || e instanceof IllegalArgumentException) {
            return error(HttpResponseStatus.BAD_REQUEST, "bad_parameter", e, redact);
        } else if (e instanceof AppendsBlockedException) {
            return error(HttpResponseStatus.SERVICE_UNAVAILABLE, "appends_blocked", e, redact);
        } else if (e instanceof AppendsRefusedException) {
            return error(HttpResponseStatus.CONFLICT, "replica", e, redact);
        } else if (e instanceof RemoteCommitUnconfirmedException unconfirmed) {
            // The record is durable locally: say so, and where it is, so that a client does not append it twice.
            return error(HttpResponseStatus.SERVICE_UNAVAILABLE, e instanceof RemoteCommitTimeoutException
                    ? "remote_commit_timeout" : "remote_commit_unconfirmed", e, redact, "lsn", Lsn.format(unconfirmed.lsn()));
        } else if (e instanceof WalFailedException) {
            return error(HttpResponseStatus.SERVICE_UNAVAILABLE, "log_failed", e, redact);
        } else if (e instanceof WalClosedException) {
            return error(HttpResponseStatus.SERVICE_UNAVAILABLE, "shutting_down", e, redact);
        } else if (e instanceof WalCorruptedException) {
            return error(HttpResponseStatus.INTERNAL_SERVER_ERROR, "corrupt", e, redact);
        } else if (e instanceof WalException) {
            return error(HttpResponseStatus.SERVICE_UNAVAILABLE, "unavailable", e, redact);
        }
        // Not one of the log's answers: a defect of the server, which the log must show with where it happened.
        LOG.warn("Answered 500 internal: {}", e.toString(), e);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", "internal");
        body.put("detail", redact.apply(String.valueOf(e)));
        return new Described(HttpResponseStatus.INTERNAL_SERVER_ERROR, body);
    }

    /** Whether the request's path names a log of its own ({@code /v1/logs/{log}/...}), not the log {@code default}. */
    private static boolean namesALog(Exchange ex) {
        return ex.route() != null && ex.route().path().startsWith("/v1/logs/{log}/")
                && !io.walden.server.config.ServerConfig.DEFAULT_LOG.equals(Route.log(ex));
    }

    /** {@code {"error": code, "detail": e's message}}, then {@code extra} as name, value pairs. */
    private static Described error(HttpResponseStatus status, String code, Throwable e, UnaryOperator<String> redact,
                                   String... extra) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", code);
        body.put("detail", e.getMessage() == null ? null : redact.apply(e.getMessage()));
        for (int i = 0; i < extra.length; i += 2) {
            body.put(extra[i], extra[i + 1]);
        }
        return new Described(status, body);
    }
}
