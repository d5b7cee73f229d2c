package io.walden.server.http;

import io.netty.handler.codec.http.QueryStringDecoder;

/**
 * The data paths of one log (docs/http-api.md): the log named {@value #DEFAULT_LOG} at today's {@code /v1/records…}
 * and {@code /v1/cursors…}, a named log {@code orders} at {@code /v1/logs/orders/records…} and
 * {@code /v1/logs/orders/cursors…}; {@link #TEMPLATE} spells the named form with {@code {log}} for a route table.
 * The one place a log's paths are built: the route table ({@link Routes}) declares its data routes with them, and the
 * console tools ask it which path to call. And, the other way, which log a request path names ({@link #logOf}), for
 * the gate's check of a token's log patterns before the body is read and for the handlers: a function of the path
 * alone, so the gate, the handlers and the tests agree with the routes.
 *
 * <p>Thread-safety: immutable.
 */
public final class LogPaths {
    /** The log at the data directory's root, served at today's paths. */
    public static final String DEFAULT_LOG = "default";
    /** Where the named logs' paths begin: {@code /v1/logs}, then {@code /<log>}. */
    public static final String LOGS = "/v1/logs";
    /** The log named {@value #DEFAULT_LOG}, at today's paths. */
    public static final LogPaths DEFAULT = new LogPaths("/v1");
    /** A named log's own path with {@code {log}} for its name (describe, change, delete): the route table's form. */
    public static final String LOG = LOGS + "/{log}";
    /** A named log's data paths with {@code {log}} for its name: the route table's form. */
    public static final LogPaths TEMPLATE = new LogPaths(LOG);

    /** {@link #LOGS} and its slash: what every named log's path begins with. */
    private static final String LOGS_PREFIX = LOGS + "/";

    /** What every data path of the log begins with. */
    private final String base;

    private LogPaths(String base) {
        this.base = base;
    }

    /**
     * The paths of log {@code log}: {@link #DEFAULT} for null (no log named) or {@value #DEFAULT_LOG}, so that a tool
     * naming the default log works against a server of any version; else the {@code /v1/logs/} ones. The name goes into
     * the path as it is: a log's name ({@code WalStore.NAME}) needs no escaping.
     */
    public static LogPaths of(String log) {
        return log == null || DEFAULT_LOG.equals(log) ? DEFAULT : new LogPaths(LOGS + "/" + log);
    }

    /** {@code POST} appends one record, {@code GET} reads a page. */
    public String records() {
        return base + "/records";
    }

    /** {@code POST} appends a batch. */
    public String batch() {
        return base + "/records/batch";
    }

    /** {@code GET} streams records. */
    public String stream() {
        return base + "/records/stream";
    }

    /** {@code GET} lists the log's consumer cursors. */
    public String cursors() {
        return base + "/cursors";
    }

    /** One consumer cursor ({@code GET}, {@code PUT}, {@code DELETE}); {@code name} as it goes into the path. */
    public String cursor(String name) {
        return cursors() + "/" + name;
    }

    /**
     * The log {@code path} (without its query) names, or null when it names none. A segment whose percent-encoding is
     * malformed is returned as it is: it is no log's name, so no log pattern matches it.
     */
    public static String logOf(String path) {
        if (path.startsWith(LOGS_PREFIX)) {
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
        int end = path.indexOf('/', LOGS_PREFIX.length());
        return path.substring(LOGS_PREFIX.length(), end < 0 ? path.length() : end);
    }

    /** Whether {@code path} acts on the server as a whole ({@code /admin/…}): no token limited to some logs may call it. */
    public static boolean serverWide(String path) {
        return under(path, "/admin");
    }

    private static boolean under(String path, String prefix) {
        return path.startsWith(prefix) && (path.length() == prefix.length() || path.charAt(prefix.length()) == '/');
    }

    @Override
    public String toString() {
        return base;
    }
}
