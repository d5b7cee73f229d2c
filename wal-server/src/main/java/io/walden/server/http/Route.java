package io.walden.server.http;

import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.QueryStringDecoder;

import java.util.Set;
import java.util.function.Consumer;

/**
 * One HTTP endpoint (docs/http-api.md): its method and path, what it does to the connection's ordering, whether it needs
 * the bearer token, how large a body it takes, and its handler. Declared once, in {@link Routes}; the router dispatches
 * by it, the connection orders requests by its kind, and the gate checks its token and body limit before the body is
 * buffered.
 *
 * @param path a literal path, or one with named segments ({@code /v1/logs/{log}/cursors/{name}}), each matching any
 *             non-empty segment (the handler reads it)
 * @param needsToken whether the request must carry the bearer token when one is configured; true unless the endpoint
 *                   was declared read-only, so that an endpoint nobody thought about is closed, not open
 * @param params     the query parameters it reads: any other is refused (400), so that a misspelt one never falls back
 *                   to a default silently; null for the probes' endpoints, which take whatever a probe adds
 */
public record Route(HttpMethod method, String path, Kind kind, boolean needsToken, Body body, Set<String> params,
                    Consumer<Exchange> handler) {

    /** What a request does, for which requests may run beside it on a connection (see HttpConnection). */
    public enum Kind {
        /** An append ({@code POST /v1/records}, {@code POST /v1/records/batch}): appends keep their order in the log. */
        APPEND,
        /** Touches no data ({@code /health}, {@code /ready}, {@code /metrics}): may run beside anything. */
        FREE,
        /** A stream: owns the connection once it starts. */
        STREAM,
        /** Anything else: runs once every request before it was answered. */
        OTHER
    }

    /** How large a body the endpoint takes. */
    public enum Body {
        /** At most {@link RequestGate#SMALL_BODY} bytes: a policy, a cursor's position, nothing at all. */
        SMALL,
        /** Up to {@code max-batch-bytes}: the appends. */
        RECORDS
    }

    /**
     * Whether this route's path matches {@code path}: literally, or segment by segment where the route's has a
     * {@code {...}} segment, which matches one non-empty segment (no slash in it). Allocates nothing.
     */
    boolean matches(String path) {
        String t = this.path;
        if (t.indexOf('{') < 0) {
            return t.equals(path);
        }
        int i = 0;
        int j = 0;
        while (i < t.length()) {
            if (t.charAt(i) == '{') {
                int close = t.indexOf('}', i);
                int end = path.indexOf('/', j);
                end = end < 0 ? path.length() : end;
                if (end == j) {
                    return false; // an empty segment
                }
                i = close + 1;
                j = end;
            } else {
                if (j >= path.length() || t.charAt(i) != path.charAt(j)) {
                    return false;
                }
                i++;
                j++;
            }
        }
        return j == path.length();
    }

    /** Whether this route's path has a named segment ({@code {...}}). */
    boolean templated() {
        return path.indexOf('{') >= 0;
    }

    /**
     * The name in the last segment of a path a named route matched ({@code /v1/cursors/orders}: {@code orders}),
     * percent-decoded as a path segment is ({@code bad%2Fname} is {@code bad/name}; a {@code +} stays a {@code +}).
     *
     * @throws IllegalArgumentException when the segment's percent-encoding is malformed
     */
    static String name(Exchange ex) {
        String path = ex.path();
        return new QueryStringDecoder(path.substring(path.lastIndexOf('/') + 1)).path();
    }

    /** The start of every per-log path: {@code /v1/logs/{log}...}. */
    static final String LOGS = LogPaths.LOGS + "/";

    /**
     * The log a {@code /v1/logs/{log}...} path names ({@code /v1/logs/orders/records}: {@code orders}), decoded as
     * {@link #name} is.
     */
    static String log(Exchange ex) {
        String path = ex.path();
        int end = path.indexOf('/', LOGS.length());
        return new QueryStringDecoder(path.substring(LOGS.length(), end < 0 ? path.length() : end)).path();
    }
}
