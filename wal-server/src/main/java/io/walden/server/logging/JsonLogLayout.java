package io.walden.server.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.LayoutBase;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * {@code --log-format json}: one JSON object per line, for log shippers (Vector, Fluent Bit, Loki, Elasticsearch):
 * <pre>{"time":"2026-11-25T17:03:04.123456Z","level":"INFO","logger":"io.walden...","thread":"main",
 *  "message":"...","log":"orders","member":"a","error":"java.io.IOException: ...\n\tat ..."}</pre>
 * {@code time} is RFC 3339 in UTC to the microsecond; {@code log} is the data directory's name (the {@code log} tag of
 * the metrics); {@code member} the server's {@code --name}, left out when it has none; {@code error} the stack trace,
 * only when the event has one. Strings are JSON-escaped by Jackson, so a message with quotes or newlines stays one line.
 */
public final class JsonLogLayout extends LayoutBase<ILoggingEvent> {
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'")
            .withZone(ZoneOffset.UTC);
    private static final JsonFactory JSON = new JsonFactory();

    private final String logName;
    private final String member;

    /** @param member the server's member name, or null */
    public JsonLogLayout(String logName, String member) {
        this.logName = logName;
        this.member = member;
    }

    @Override
    public String doLayout(ILoggingEvent event) {
        return line(event.getInstant(), event.getLevel().toString(), event.getLoggerName(), event.getThreadName(),
                event.getFormattedMessage(), event.getThrowableProxy() == null ? null
                        : ThrowableProxyUtil.asString(event.getThrowableProxy())) + '\n';
    }

    /** One event as a JSON object (no line break): a log event's, or a line the server writes itself (ConsoleLines). */
    String line(Instant time, String level, String logger, String thread, String message, String error) {
        StringWriter out = new StringWriter(256);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("time", TIME.format(time));
            g.writeStringField("level", level);
            g.writeStringField("logger", logger);
            g.writeStringField("thread", thread);
            g.writeStringField("message", message);
            g.writeStringField("log", logName);
            if (member != null) {
                g.writeStringField("member", member);
            }
            if (error != null) {
                g.writeStringField("error", error);
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return out.toString();
    }
}
