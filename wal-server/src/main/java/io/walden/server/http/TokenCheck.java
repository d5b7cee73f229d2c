package io.walden.server.http;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.walden.server.auth.Grant;
import io.walden.server.auth.Role;
import io.walden.server.auth.Tokens;

/**
 * One connection's check of its requests' tokens (docs/operations.md, "Tokens and roles"), run by {@link RequestGate}
 * on each request's head, before its body is read:
 * <ol>
 *   <li>the role the request needs, from the route table ({@link Routes#roleFor}); none: it goes on, with
 *       {@link Grant#NONE};</li>
 *   <li>the bearer token of its {@code Authorization} header, found by its SHA-256 ({@link Tokens}): 401 when there is
 *       none ({@code missing}) or no entry has it ({@code unknown});</li>
 *   <li>the token's role must include the role needed: else 403 ({@code role});</li>
 *   <li>a token limited to some logs must match the log the path names ({@link LogPaths#logOf}), and may call nothing
 *       that acts on the whole server ({@link LogPaths#serverWide}): else 403 ({@code log}).</li>
 * </ol>
 * Each refusal is counted in {@link Access} by its reason. A handler that touches a log its path does not name (the
 * body of {@code POST /v1/logs}, the list of {@code GET /v1/logs}) checks {@code Exchange.grant()} itself.
 *
 * <p>Thread-safety: one instance per connection, used on its event loop.
 */
final class TokenCheck {
    /** RFC 6750's challenges: no token, a token no entry has, a token that may not. */
    private static final String NO_TOKEN = "Bearer realm=\"walden\"";
    private static final String INVALID = "Bearer realm=\"walden\", error=\"invalid_token\"";
    static final String INSUFFICIENT = "Bearer realm=\"walden\", error=\"insufficient_scope\"";
    private static final String SCHEME = "Bearer";

    /** Why a request was refused, as its answer says it. */
    record Denial(HttpResponseStatus status, String error, String detail, String challenge) {
    }

    private final Routes routes;
    private final Access access;
    /** The tokens {@link #lookup} finds in: the access's, looked at again at each request (they may be replaced). */
    private Tokens current;
    private Tokens.Lookup lookup;
    private Grant grant = Grant.NONE;

    /** @param access its tokens must be configured (not null) */
    TokenCheck(Routes routes, Access access) {
        this.routes = routes;
        this.access = access;
        this.current = access.tokens();
        this.lookup = current.lookup();
    }

    /** The grant of the request last checked without a denial. */
    Grant grant() {
        return grant;
    }

    /** Checks a request's head (class comment): null when it may go on ({@link #grant()}), else why not (counted). */
    Denial check(HttpRequest head, String path) {
        grant = Grant.NONE;
        Role needed = routes.roleFor(head.method(), path);
        if (needed == null) {
            return null;
        }
        String header = head.headers().get(HttpHeaderNames.AUTHORIZATION);
        int token = header == null ? -1 : tokenStart(header);
        if (token < 0) {
            access.missing().increment();
            return new Denial(HttpResponseStatus.UNAUTHORIZED, "unauthorized", "send Authorization: Bearer <token>",
                    NO_TOKEN);
        }
        Tokens inForce = access.tokens();
        if (inForce != current) { // the tokens file was re-read: a lookup of the new tokens, once per connection
            current = inForce;
            lookup = inForce.lookup();
        }
        Grant found = lookup.find(header, token);
        if (found == null) {
            access.unknown().increment();
            return new Denial(HttpResponseStatus.UNAUTHORIZED, "unauthorized", "the bearer token is not one this server "
                    + "accepts: send Authorization: Bearer <token> with a token it has", INVALID);
        }
        if (!found.role().includes(needed)) {
            access.role().increment();
            return forbidden("a token of role " + found.role().configName() + " may not " + head.method() + " " + path
                    + ": that needs " + needed.configName());
        }
        if (found.limited()) {
            if (LogPaths.serverWide(path)) {
                access.log().increment();
                return forbidden("a token limited to some logs (" + found.describeLogs() + ") may not " + head.method()
                        + " " + path + ": it acts on the whole server");
            }
            String log = LogPaths.logOf(path);
            if (log != null && !found.permitsLog(log)) {
                access.log().increment();
                return forbidden("this token may not use the log '" + log + "' (it is limited to "
                        + found.describeLogs() + ")");
            }
        }
        grant = found;
        return null;
    }

    private static Denial forbidden(String why) {
        return new Denial(HttpResponseStatus.FORBIDDEN, "forbidden", why + "; nothing was done", INSUFFICIENT);
    }

    /**
     * Where the token starts in an {@code Authorization} value ({@code Bearer <token>}, the scheme in any case, RFC
     * 7235), or -1 when it holds no bearer token.
     */
    static int tokenStart(String header) {
        if (header.length() <= SCHEME.length() || !header.regionMatches(true, 0, SCHEME, 0, SCHEME.length())
                || header.charAt(SCHEME.length()) != ' ') {
            return -1;
        }
        int at = SCHEME.length();
        while (at < header.length() && header.charAt(at) == ' ') {
            at++;
        }
        return at < header.length() ? at : -1;
    }
}
