package io.walden.server.http;

import io.netty.handler.codec.http.QueryStringDecoder;

/**
 * Which log a request path names (docs/http-api.md, "Named logs"), for the gate's check of a token's log patterns
 * before the body is read. Pure: a function of the path alone, so the gate and the tests agree with the routes.
 * <ul>
 *   <li>{@code /v1/logs/{log}} and everything under it: {@code log} (percent-decoded as a path segment);</li>
 *   <li>{@code /v1/records…} and {@code /v1/cursors…}: the log {@code default};</li>
 *   <li>anything else ({@code /v1/logs} itself, {@code /admin/…}, the probes): no log (null).</li>
 * </ul>
 */
public final class LogPaths {
    /** The log today's {@code /v1/records…} and {@code /v1/cursors…} paths are. */
    public static final String DEFAULT_LOG = "default";
    private static final String LOGS = "/v1/logs/";

    private LogPaths() {
    }

    /**
     * The log {@code path} (without its query) names, or null when it names none. A segment whose percent-encoding is
     * malformed is returned as it is: it is no log's name, so no log pattern matches it.
     */
    public static String logOf(String path) {
        if (path.startsWith(LOGS)) {
            try {
                return namedLog(path);
            } catch (IllegalArgumentException e) {
                return segment(path);
            }
        }
        if (under(path, "/v1/records") || under(path, "/v1/cursors")) {
            return DEFAULT_LOG;
        }
        return null;
    }

    /**
     * The log a {@code /v1/logs/{log}...} path names, percent-decoded as a path segment is (a {@code +} stays a
     * {@code +}): the handlers' reading of it ({@code Route.log}) and the gate's are this one.
     *
     * @throws IllegalArgumentException when the segment's percent-encoding is malformed
     */
    static String namedLog(String path) {
        String segment = segment(path);
        // A log's name never needs escaping: only a name no log can have is percent-encoded (decoded then, to be refused).
        return segment.indexOf('%') < 0 ? segment : new QueryStringDecoder(segment).path();
    }

    /** The {@code {log}} segment of a {@code /v1/logs/{log}...} path, as it is. */
    private static String segment(String path) {
        int end = path.indexOf('/', LOGS.length());
        return path.substring(LOGS.length(), end < 0 ? path.length() : end);
    }

    /** Whether {@code path} acts on the server as a whole ({@code /admin/…}): no token limited to some logs may call it. */
    public static boolean serverWide(String path) {
        return under(path, "/admin");
    }

    private static boolean under(String path, String prefix) {
        return path.startsWith(prefix) && (path.length() == prefix.length() || path.charAt(prefix.length()) == '/');
    }
}
