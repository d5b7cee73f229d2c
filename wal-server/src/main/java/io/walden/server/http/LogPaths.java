package io.walden.server.http;

/**
 * The data paths of one log (docs/http-api.md): the log named {@value #DEFAULT_LOG} at today's {@code /v1/records…}
 * and {@code /v1/cursors…}, a named log {@code orders} at {@code /v1/logs/orders/records…} and
 * {@code /v1/logs/orders/cursors…}; {@link #TEMPLATE} spells the named form with {@code {log}} for a route table.
 * The one place a log's paths are built: the route table ({@link Routes}) declares its data routes with them, and the
 * console tools ask it which path to call.
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

    @Override
    public String toString() {
        return base;
    }
}
