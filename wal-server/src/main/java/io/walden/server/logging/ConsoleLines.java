package io.walden.server.logging;

import java.time.Instant;

/**
 * The lines {@code walden serve} writes itself, beside its log: the address it serves on (standard output) and why it
 * could not start (standard error). With {@code --log-format text} they are plain ({@code walden: serving on ...});
 * with {@code json} each is an event like the log's ({@link JsonLogLayout}), so that every line a log collector reads
 * from the process parses as JSON.
 *
 * <p>Thread-safety: immutable.
 */
public final class ConsoleLines {
    /** null: text. */
    private final JsonLogLayout json;
    private final String logger;

    /**
     * @param logName the log's name (the data directory's), as on the log's JSON lines
     * @param member  the server's member name, or null
     * @param source  who writes the lines (the JSON {@code logger} field)
     */
    public ConsoleLines(LogFormat format, String logName, String member, Class<?> source) {
        this.json = format == LogFormat.JSON ? new JsonLogLayout(logName, member) : null;
        this.logger = source.getName();
    }

    /** {@code INFO} line: {@code prefix + message} as text, or an event with {@code message}. */
    public String info(String prefix, String message) {
        return line("INFO", prefix, message);
    }

    /** {@code ERROR} line, as {@link #info}. */
    public String error(String prefix, String message) {
        return line("ERROR", prefix, message);
    }

    private String line(String level, String prefix, String message) {
        return json == null ? prefix + message
                : json.line(Instant.now(), level, logger, Thread.currentThread().getName(), message, null);
    }
}
