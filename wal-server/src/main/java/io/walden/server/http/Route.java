package io.walden.server.http;

import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.walden.server.auth.Role;

import java.util.Set;
import java.util.function.Consumer;

/**
 * One HTTP endpoint (docs/http-api.md): its method and path, what it does to the connection's ordering, the role a
 * token needs to call it, how large a body it takes, and its handler. Declared once, in {@link Routes}; the router dispatches
 * by it, the connection orders requests by its kind, and the gate checks its role and body limit before the body is
 * buffered.
 *
 * @param path a literal path, or one ending in {@code /{name}}: any non-empty last segment (the handler reads it)
 * @param role       the role a token needs to call it when tokens are configured ({@link Role}), or null for the open
 *                   read-only endpoints (the probes, the status, the OpenAPI document); every other helper of
 *                   {@link Routes} takes a role, so that an endpoint nobody thought about is not left open
 * @param params     the query parameters it reads: any other is refused (400), so that a misspelt one never falls back
 *                   to a default silently; null for the probes' endpoints, which take whatever a probe adds
 */
public record Route(HttpMethod method, String path, Kind kind, Role role, Body body, Set<String> params,
                    Consumer<Exchange> handler) {
    /** The suffix of a path whose last segment is a name. */
    static final String NAME = "/{name}";

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

    /** Whether this route's path matches {@code path} (a named last segment: one non-empty segment, no slash in it). */
    boolean matches(String path) {
        if (!this.path.endsWith(NAME)) {
            return this.path.equals(path);
        }
        int prefix = this.path.length() - NAME.length() + 1; // keeps the slash
        return path.length() > prefix && path.regionMatches(0, this.path, 0, prefix) && path.indexOf('/', prefix) < 0;
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
}
