package io.walden.server.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.walden.core.AppendCompletion;
import io.walden.core.Durability;
import io.walden.server.auth.Grant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One request and the means to answer it exactly once, from any thread: the answer is handed to the connection's
 * event loop ({@link HttpConnection}), which writes answers in the order their requests arrived. Every way an
 * exchange ends (an answer written, a stream finished, the connection lost) goes through the connection, which
 * releases the request and recycles the exchange once.
 *
 * <p>An exchange is reused by its connection from one request to the next, so that the hot paths allocate nothing:
 * it is the {@link AppendCompletion} of its append (told on whichever thread made the append durable) and the
 * {@link Runnable} that carries that news back to the event loop.
 *
 * <p>Thread-safety: the request's fields are set on the event loop before the exchange is handed to any other
 * thread; an answer may come from any thread, once.
 */
public final class Exchange extends AppendCompletion implements Runnable {
    static final ObjectMapper JSON = new ObjectMapper();
    private static final Logger LOG = LoggerFactory.getLogger(Exchange.class);

    /** What {@link #run} does on the event loop: carry an off-loop outcome in. */
    private enum Handoff { NONE, DURABLE, FAILED, ANSWER }

    private final HttpConnection connection;
    private FullHttpRequest request;
    private String uri;
    private QueryStringDecoder query;
    private boolean keepAlive;
    private boolean released;
    private boolean streaming;
    /** Set (event loop) when the client half-closed: a stream writing this answer ends at its next poll. */
    private volatile boolean streamEndRequested;
    /** What the request's token allows ({@link RequestGate}): {@link Grant#ALL} when no token is configured. */
    private Grant grant;
    /** The request's route (null: none matches) and what it does, set before it is queued. */
    private Route route;
    private Route.Kind kind;
    private boolean started;
    private boolean finished;
    /** The answer, once there is one: a pre-encoded {@link ByteBuf} or an {@link io.netty.handler.codec.http.HttpResponse}. */
    private Object answer;
    private Durability level;
    /** When the append began, and where its latency goes once durable. */
    private long appendNanos;
    private CommitLatency latency;
    private Handoff handoff = Handoff.NONE;
    private long lsn;
    private Throwable failure;
    private Object offLoopAnswer;

    Exchange(HttpConnection connection) {
        this.connection = connection;
    }

    /** Takes the next request (event loop), with what its token allows. */
    void begin(FullHttpRequest request, Grant grant) {
        this.request = request;
        this.grant = grant;
        this.uri = request.uri();
        this.query = null;
        this.keepAlive = HttpUtil.isKeepAlive(request);
        this.released = false;
        this.streaming = false;
        this.streamEndRequested = false;
        this.started = false;
        this.finished = false;
        this.answer = null;
        this.handoff = Handoff.NONE;
        this.failure = null;
        this.offLoopAnswer = null;
        this.route = null; // until the router finds it (a refusal never gets one)
        this.kind = Route.Kind.OTHER;
    }

    public FullHttpRequest request() {
        return request;
    }

    /**
     * What the request's token allows: its role and logs, checked by the gate against the route and the log its path
     * names; a handler that touches another log (named in the body, or each of a list) asks {@link Grant#permits}.
     * {@link Grant#ALL} when no token is configured; {@link Grant#NONE} on an open endpoint.
     */
    public Grant grant() {
        return grant;
    }

    /** The request's path, without its query. */
    public String path() {
        int q = uri.indexOf('?');
        return q < 0 ? uri : uri.substring(0, q);
    }

    /** The raw request target (path and query, undecoded). */
    String uri() {
        return uri;
    }

    public ChannelHandlerContext ctx() {
        return connection.ctx();
    }

    /**
     * Where the first value of query parameter {@code name} lies in the request target, undecoded: {@code start << 32 |
     * end}, or -1 when the parameter is absent. Lets the hot path match a value in place (see {@link #param} otherwise).
     * When a name in the query is percent-encoded ({@code dur%61bility}), names can only be matched decoded: the span
     * is then empty ({@code 0}) whenever the parameter is present, and the caller reads the value with {@link #param}.
     */
    long paramSpan(String name) {
        int q = uri.indexOf('?');
        if (q < 0) {
            return -1;
        }
        if (encodedNames(q)) {
            return param(name) == null ? -1 : 0;
        }
        int at = q + 1;
        while (at < uri.length()) {
            int end = uri.indexOf('&', at);
            if (end < 0) {
                end = uri.length();
            }
            if (end - at > name.length() && uri.charAt(at + name.length()) == '=' && uri.startsWith(name, at)) {
                return (long) (at + name.length() + 1) << 32 | end;
            }
            at = end + 1;
        }
        return -1;
    }

    /** Whether a name in the query (from {@code q}, the '?') holds a '%': a query without one costs one indexOf. */
    private boolean encodedNames(int q) {
        if (uri.indexOf('%', q) < 0) {
            return false;
        }
        for (int at = q + 1; at < uri.length(); ) {
            int end = uri.indexOf('&', at);
            if (end < 0) {
                end = uri.length();
            }
            int eq = uri.indexOf('=', at);
            int percent = uri.indexOf('%', at);
            if (percent >= 0 && percent < (eq < 0 || eq > end ? end : eq)) {
                return true;
            }
            at = end + 1;
        }
        return false;
    }

    /**
     * The first query parameter whose name is not in {@code known}, decoded, or null: a scan of the raw query that
     * decodes only a name that is not plainly known (a request without a query costs one {@code indexOf}). Names are
     * decoded as {@link #param} decodes them ({@code from%5Ftime} is {@code from_time}).
     */
    String unknownParam(Set<String> known) {
        int q = uri.indexOf('?');
        if (q < 0) {
            return null;
        }
        for (int at = q + 1; at < uri.length(); ) {
            int end = uri.indexOf('&', at);
            if (end < 0) {
                end = uri.length();
            }
            int eq = uri.indexOf('=', at);
            String name = uri.substring(at, eq < 0 || eq > end ? end : eq);
            if (!name.isEmpty() && !known.contains(name)) {
                String decoded = QueryStringDecoder.decodeComponent(name);
                if (!known.contains(decoded)) {
                    return decoded;
                }
            }
            at = end + 1;
        }
        return null;
    }

    /** A query parameter's single value (decoded), or null. */
    public String param(String name) {
        if (uri.indexOf('?') < 0) {
            return null;
        }
        if (query == null) {
            query = new QueryStringDecoder(uri);
        }
        List<String> v = query.parameters().get(name);
        return v == null || v.isEmpty() ? null : v.get(0);
    }

    /** Whether the connection stays open after this answer. */
    public boolean keepAlive() {
        return keepAlive;
    }

    /** Closes the connection after the answer (the request could not be parsed: nothing after it can be). */
    void closeAfterAnswer() {
        keepAlive = false;
    }

    /** Releases the request's body as soon as it was copied (idempotent; event loop only). */
    void releaseRequest() {
        if (!released) {
            released = true;
            request.release();
        }
    }

    // ------------------------------------------------------------------ answers

    /** Answers with a JSON body. */
    public void json(HttpResponseStatus status, Object body) {
        deliver(jsonResponse(status, body));
    }

    /**
     * Answers 200 with a JSON body that the request's {@code Accept} chose: the same URL answers record frames to a
     * client that asks for them ({@link #frames}), so the answer says {@code Vary: Accept} for caches, as frames do.
     */
    void negotiatedJson(Object body) {
        FullHttpResponse response = jsonResponse(HttpResponseStatus.OK, body);
        if (response.status().equals(HttpResponseStatus.OK)) {
            response.headers().set(HttpHeaderNames.VARY, HttpHeaderNames.ACCEPT);
        }
        deliver(response);
    }

    private FullHttpResponse jsonResponse(HttpResponseStatus status, Object body) {
        byte[] bytes;
        try {
            bytes = JSON.writeValueAsBytes(body);
        } catch (Exception e) {
            // A body that cannot be written is the server's defect, never the client's: say so in the log, with where.
            LOG.warn("Could not write the {} answer to {} {}: {}", status.code(), request.method(), request.uri(), e.toString(), e);
            bytes = ("{\"error\":\"internal\",\"detail\":\"" + e.getClass().getSimpleName() + "\"}").getBytes(StandardCharsets.UTF_8);
            status = HttpResponseStatus.INTERNAL_SERVER_ERROR;
        }
        return HttpResponses.full(status, Unpooled.wrappedBuffer(bytes), "application/json");
    }

    /** Answers with {@code {"error": ..., "detail": ...}}; the detail names files without the server's paths. */
    public void error(HttpResponseStatus status, String error, String detail) {
        error(status, error, detail, null);
    }

    /** An error with a {@code WWW-Authenticate} challenge (RFC 6750), when {@code challenge} is not null. */
    void error(HttpResponseStatus status, String error, String detail, String challenge) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", error);
        body.put("detail", redact(detail));
        FullHttpResponse response = jsonResponse(status, body);
        if (challenge != null) {
            response.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, challenge);
        }
        deliver(response);
    }

    /**
     * Answers 307 Temporary Redirect to {@code location} (the same request at another server: a client re-sends it there,
     * method and body unchanged), with {@code {"error": ..., "detail": ..., "location": ...}} for clients that do not
     * follow redirects.
     */
    private void redirect(String location, String error, String detail) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", error);
        body.put("detail", detail);
        body.put("location", location);
        FullHttpResponse response = jsonResponse(HttpResponseStatus.TEMPORARY_REDIRECT, body);
        response.headers().set(HttpHeaderNames.LOCATION, location);
        deliver(response);
    }

    /** Redirects a request about log {@code log}, led by the server at {@code primary} (a base URL), there: 307. */
    void redirectToPrimary(String log, String primary) {
        redirect(primary + uri(), "log_elsewhere", "log '" + log + "' is led by the server at " + primary
                + ": the same request goes there");
    }

    /**
     * Refuses the request 403 {@code forbidden}: its token's log patterns do not allow a log the handler found past
     * the gate (the name in {@code POST /v1/logs}'s body), counted as the gate counts its own ({@code reason=log}).
     */
    public void forbidden(String why) {
        connection.access().log().increment();
        error(HttpResponseStatus.FORBIDDEN, "forbidden", why + "; nothing was done", TokenCheck.INSUFFICIENT);
    }

    /** A message fit for a client: file names stay, the server's absolute paths go (they are the operator's business). */
    public String redact(String message) {
        return message == null ? null : connection.redact(message);
    }

    public void text(HttpResponseStatus status, String body, String contentType) {
        send(status, Unpooled.copiedBuffer(body, StandardCharsets.UTF_8), contentType);
    }

    /**
     * Answers with bytes that are already a whole HTTP/1.1 response ({@link HttpResponses}, whose {@code connection}
     * header must match {@link #keepAlive()}), from the event loop.
     */
    public void respondEncoded(ByteBuf response) {
        connection.answered(this, response);
    }

    /** Answers 200 with record frames ({@link RecordFrames}); {@code next} is where to continue, in a header. */
    void frames(ByteBuf content, String next) {
        FullHttpResponse response = HttpResponses.full(HttpResponseStatus.OK, content, RecordFrames.MEDIA_TYPE);
        response.headers().set(RecordFrames.NEXT_HEADER, next);
        response.headers().set(HttpHeaderNames.VARY, HttpHeaderNames.ACCEPT); // the same URL answers JSON without that Accept
        deliver(response);
    }

    /** Answers 200 with raw bytes of {@code contentType}, and {@code headers} (name to value). */
    void binary(ByteBuf content, String contentType, Map<String, String> headers) {
        FullHttpResponse response = HttpResponses.full(HttpResponseStatus.OK, content, contentType);
        headers.forEach((name, value) -> response.headers().set(name, value));
        deliver(response);
    }

    private void send(HttpResponseStatus status, ByteBuf content, String contentType) {
        deliver(HttpResponses.full(status, content, contentType));
    }

    private void deliver(FullHttpResponse response) {
        if (connection.inEventLoop()) {
            connection.answered(this, response);
        } else {
            offLoopAnswer = response;
            handoff(Handoff.ANSWER);
        }
    }

    // ------------------------------------------------------------------ appends

    /** Before the exchange is given to the log as the completion of an append at {@code level}. */
    void appending(Durability level, CommitLatency latency) {
        this.level = level;
        this.latency = latency;
        this.appendNanos = System.nanoTime();
    }

    @Override
    protected void durable(long lsn) {
        latency.record(level, appendNanos);
        if (connection.inEventLoop()) {
            answerAppended(lsn);
        } else {
            this.lsn = lsn;
            handoff(Handoff.DURABLE);
        }
    }

    @Override
    protected void failed(Throwable cause) {
        if (connection.inEventLoop()) {
            ApiErrors.answer(this, cause);
        } else {
            this.failure = cause;
            handoff(Handoff.FAILED);
        }
    }

    private void answerAppended(long lsn) {
        connection.answered(this, HttpResponses.appended(connection.ctx().alloc(), lsn, level, keepAlive));
    }

    private void handoff(Handoff what) {
        handoff = what; // published to the event loop by the executor's queue
        connection.execute(this);
    }

    /** On the event loop: an outcome that arrived on another thread. */
    @Override
    public void run() {
        Handoff what = handoff;
        handoff = Handoff.NONE;
        switch (what) {
            case DURABLE:
                answerAppended(lsn);
                break;
            case FAILED:
                ApiErrors.answer(this, failure);
                break;
            case ANSWER:
                connection.answered(this, offLoopAnswer);
                offLoopAnswer = null;
                break;
            default:
                break;
        }
    }

    // ------------------------------------------------------------------ state the connection keeps

    /** Stores the answer (event loop); false when it already had one (a second answer is dropped). */
    boolean setAnswer(Object response) {
        if (answer != null) {
            return false;
        }
        answer = response;
        return true;
    }

    Object takeAnswer() {
        Object a = answer;
        answer = null;
        return a;
    }

    boolean hasAnswer() {
        return answer != null;
    }

    /** The answer is a stream written by the caller; {@link #finish} ends it. */
    void markStreaming() {
        streaming = true;
        keepAlive = false;
    }

    /** Asks a stream on this exchange, started or not, to end (any thread). */
    void endStream() {
        streamEndRequested = true;
    }

    /** Whether the stream should end now (read by the stream's reader thread). */
    boolean streamEndRequested() {
        return streamEndRequested;
    }

    boolean isStreaming() {
        return streaming;
    }

    void route(Route route, Route.Kind kind) {
        this.route = route;
        this.kind = kind;
    }

    Route route() {
        return route;
    }

    /** An append whose body was handed on: from now on it orders like any other request (HttpConnection). */
    void kind(Route.Kind kind) {
        this.kind = kind;
    }

    /** What the request does, for which requests may run beside it (HttpConnection). */
    Route.Kind kind() {
        return kind;
    }

    void started() {
        started = true;
    }

    /** This append waits off the event loop: the connection's later requests wait for its answer (no overtaking). */
    void holdLaterRequests() {
        connection.holdBehind(this);
    }

    /** The exchange's request is done with (answer written, or stream ended): a late second answer is dropped. */
    void finished() {
        finished = true;
    }

    boolean isFinished() {
        return finished;
    }

    boolean isStarted() {
        return started;
    }

    /** Ends a stream (from any thread): the connection closes after what was written. */
    void finish() {
        connection.finishStream(this);
    }
}
