package io.walden.server.auth;

import io.walden.core.WalStore;

import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.Locale;
import java.util.regex.PatternSyntaxException;

/**
 * A glob over log names ({@code orders*}, {@code audit-?}, {@code {orders,invoices}}, {@code tenant-[0-9]*}), with
 * the syntax of {@link java.nio.file.FileSystem#getPathMatcher} (the JDK's glob, not a hand-written twin): a log name
 * is one path segment, so {@code *} matches any run of its characters.
 *
 * <p>Thread-safety: immutable.
 */
public final class LogGlob {
    private final String pattern;
    private final PathMatcher matcher;

    private LogGlob(String pattern, PathMatcher matcher) {
        this.pattern = pattern;
        this.matcher = matcher;
    }

    /**
     * @throws IllegalArgumentException when the pattern is empty, holds a {@code /} or a capital letter (log names have
     *                                  neither, so it could never match), or is not a glob
     */
    public static LogGlob parse(String pattern) {
        if (pattern.isEmpty()) {
            throw new IllegalArgumentException("an empty log pattern");
        }
        if (pattern.indexOf('/') >= 0 || !pattern.equals(pattern.toLowerCase(Locale.ROOT))) {
            throw new IllegalArgumentException("log pattern '" + pattern + "' could never match: log names are lower "
                    + "case and hold no '/'");
        }
        try {
            return new LogGlob(pattern, FileSystems.getDefault().getPathMatcher("glob:" + pattern));
        } catch (PatternSyntaxException e) {
            throw new IllegalArgumentException("log pattern '" + pattern + "' is not a glob: " + e.getDescription()
                    + " at index " + e.getIndex());
        }
    }

    /** Whether the log named {@code log} matches: a name no log may have (see {@link WalStore#NAME}) never does. */
    public boolean matches(String log) {
        return WalStore.NAME.matcher(log).matches() && matcher.matches(Path.of(log));
    }

    @Override
    public String toString() {
        return pattern;
    }
}
