package io.walden.server.logging;

import java.util.Locale;

/** How the server writes its log lines to standard error: for people ({@code text}) or for a log shipper ({@code json}). */
public enum LogFormat {
    /** One line per event: time, level, thread, logger, message (and the stack trace below it). */
    TEXT,
    /** One JSON object per line ({@link JsonLogLayout}). */
    JSON;

    public static LogFormat parse(String s) {
        try {
            return valueOf(s.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("'" + s + "' is not a log format: use text or json");
        }
    }
}
