package io.walden.server.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * The server's logging (Logback, in wal-server only: the library modules log through SLF4J's API and force no
 * backend on an application). Until {@code serve} has read its settings, {@code logback.xml} applies: text on
 * standard error, Walden's loggers at INFO and libraries' at WARN. {@link #configure} then replaces it with the
 * chosen level and format.
 *
 * <p>{@code --log-level} sets Walden's loggers ({@code io.walden}); libraries (Netty, ZooKeeper, the AWS SDK) log at
 * WARN and above, or at ERROR only when that level is ERROR, so that {@code debug} shows Walden's detail without the
 * libraries' noise.
 */
public final class ServerLogging {
    /** The text format: what {@code logback.xml} uses too. */
    static final String TEXT_PATTERN = "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger - %msg%n";

    private ServerLogging() {
    }

    /** The level named {@code s} (trace, debug, info, warn, error; any case), or an error naming the choices. */
    public static String parseLevel(String s) {
        String name = s.trim().toUpperCase(Locale.ROOT);
        return switch (name) {
            case "TRACE", "DEBUG", "INFO", "WARN", "ERROR" -> name.toLowerCase(Locale.ROOT);
            default -> throw new IllegalArgumentException("'" + s + "' is not a log level: use trace, debug, info, warn or error");
        };
    }

    /**
     * Sends every log event from now on to standard error in {@code format}, Walden's at {@code level}.
     *
     * @param logName the log's name (the data directory's), on every JSON line
     * @param member  the server's member name, or null
     */
    public static void configure(String level, LogFormat format, String logName, String member) {
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx)) {
            return; // another SLF4J backend on the class path (an application embedding the server): its own config rules
        }
        ctx.reset();
        ConsoleAppender<ILoggingEvent> console = new ConsoleAppender<>();
        console.setContext(ctx);
        console.setName("stderr");
        console.setTarget("System.err");
        console.setEncoder(encoder(ctx, format, logName, member));
        console.start();
        Level walden = Level.toLevel(level, Level.INFO);
        Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.setLevel(walden.isGreaterOrEqual(Level.WARN) ? walden : Level.WARN);
        root.addAppender(console);
        ctx.getLogger("io.walden").setLevel(walden);
    }

    private static Encoder<ILoggingEvent> encoder(LoggerContext ctx, LogFormat format, String logName, String member) {
        if (format == LogFormat.JSON) {
            JsonLogLayout layout = new JsonLogLayout(logName, member);
            layout.setContext(ctx);
            layout.start();
            LayoutWrappingEncoder<ILoggingEvent> e = new LayoutWrappingEncoder<>();
            e.setContext(ctx);
            e.setCharset(StandardCharsets.UTF_8); // never the platform's (a service's C locale would turn é into ?)
            e.setLayout(layout);
            e.start();
            return e;
        }
        PatternLayoutEncoder e = new PatternLayoutEncoder();
        e.setContext(ctx);
        e.setCharset(StandardCharsets.UTF_8);
        e.setPattern(TEXT_PATTERN);
        e.start();
        return e;
    }
}
