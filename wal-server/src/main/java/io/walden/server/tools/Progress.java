package io.walden.server.tools;

import java.io.PrintStream;

/**
 * Progress of long work, shown on a terminal only (never in pipes or logs): one line on stderr, rewritten
 * in place, at most ten times a second.
 */
public final class Progress implements AutoCloseable {
    private final PrintStream out;
    private final boolean enabled;
    private long lastNanos;
    private int lastLength;

    public Progress(PrintStream out, boolean enabled) {
        this.out = out;
        this.enabled = enabled;
    }

    /** Progress on stderr when the process has a terminal. */
    public static Progress onTerminal() {
        return new Progress(System.err, System.console() != null);
    }

    public void show(String text) {
        if (!enabled) {
            return;
        }
        long now = System.nanoTime();
        if (now - lastNanos < 100_000_000L) {
            return;
        }
        lastNanos = now;
        String padded = text.length() < lastLength ? text + " ".repeat(lastLength - text.length()) : text;
        out.print("\r" + padded);
        out.flush();
        lastLength = text.length();
    }

    @Override
    public void close() {
        if (enabled && lastLength > 0) {
            out.print("\r" + " ".repeat(lastLength) + "\r");
            out.flush();
        }
    }
}
