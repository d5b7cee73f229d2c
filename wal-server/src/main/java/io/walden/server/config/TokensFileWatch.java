package io.walden.server.config;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.walden.server.auth.Tokens;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Re-reads the {@code --auth-tokens} file when it changes, so that a token is added, revoked or given another role
 * without a restart (docs/operations.md, "Tokens and roles"). Every {@link #PERIOD_MILLIS} it compares the file's
 * modification time and size with what it saw last (a file replaced by a rename, as a Kubernetes secret is, or a
 * symbolic link moved, counts as changed); on a change it reads the file as the start did and puts the new tokens in
 * force, with {@code --auth-token}'s admin beside them.
 *
 * <p>A file that cannot be read or is not valid (half written, a typo, deleted) changes nothing: the tokens in force
 * stay, and the error is logged once per change of the file, naming the file and the entry, as at start. Counted in
 * {@code walden.http.auth.reloads} by {@code result} ({@code applied}, {@code refused}).
 *
 * <p>Thread-safety: {@link #look} runs on one thread at a time (the worker given to {@link #scheduleOn}, a single
 * thread); its fields are that thread's.
 */
public final class TokensFileWatch {
    private static final Logger LOG = LoggerFactory.getLogger(TokensFileWatch.class);
    /** How often the file is looked at. */
    public static final long PERIOD_MILLIS = 2000;

    private final ServerConfig config;
    private final Path file;
    private final Consumer<Tokens> inForce;
    private final Counter applied;
    private final Counter refused;
    private FileTime seenModified;
    private long seenSize;
    private String lastProblem;

    private TokensFileWatch(ServerConfig config, Path file, Consumer<Tokens> inForce, MeterRegistry registry) {
        this.config = config;
        this.file = file;
        this.inForce = inForce;
        this.applied = reloads(registry, "applied");
        this.refused = reloads(registry, "refused");
        try {
            BasicFileAttributes now = Files.readAttributes(file, BasicFileAttributes.class);
            seenModified = now.lastModifiedTime(); // as the start read it (a change since is seen at the first look)
            seenSize = now.size();
        } catch (IOException e) {
            seenModified = null; // gone since the start read it: the first look says so
        }
    }

    /**
     * A watch of the server's tokens file that hands each new set of tokens to {@code inForce}, or null when the server
     * has no tokens file.
     */
    public static TokensFileWatch of(ServerConfig config, Consumer<Tokens> inForce, MeterRegistry registry) {
        Path file = TokensFile.file(config);
        return file == null ? null : new TokensFileWatch(config, file, inForce, registry);
    }

    private static Counter reloads(MeterRegistry registry, String result) {
        return Counter.builder("walden.http.auth.reloads").tag("result", result)
                .description("Changes of the --auth-tokens file: applied, or refused (the tokens in force stay)")
                .register(registry);
    }

    /** Looks every {@link #PERIOD_MILLIS} on {@code timer}, reading the file on {@code worker} (never the timer's thread). */
    public void scheduleOn(ScheduledExecutorService timer, Executor worker) {
        timer.scheduleWithFixedDelay(() -> {
            try {
                worker.execute(this::look);
            } catch (RejectedExecutionException stopping) {
                // the server stops: nothing to put in force any more
            }
        }, PERIOD_MILLIS, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Reads the file if it changed since the last look, and puts its tokens in force when they are valid. */
    void look() {
        FileTime modified;
        long size;
        try {
            BasicFileAttributes now = Files.readAttributes(file, BasicFileAttributes.class);
            modified = now.lastModifiedTime();
            size = now.size();
        } catch (IOException e) {
            refuse("auth-tokens: " + file + ": cannot read it (" + e.getClass().getSimpleName() + ")");
            seenModified = null;
            return;
        }
        if (modified.equals(seenModified) && size == seenSize) {
            return;
        }
        seenModified = modified;
        seenSize = size;
        Tokens next;
        try {
            next = TokensFile.of(config, TokensFile.read(file.toString()));
        } catch (RuntimeException e) {
            refuse("auth-tokens: " + e.getMessage());
            return;
        }
        inForce.accept(next);
        lastProblem = null;
        applied.increment();
        LOG.info("Re-read the tokens of {} (auth-tokens): {} token(s) in force now", file, next.size());
    }

    private void refuse(String problem) {
        if (!Objects.equals(problem, lastProblem)) { // once per problem, not every period while the file stays bad
            lastProblem = problem;
            refused.increment();
            LOG.error("{}; the tokens in force stay until the file is valid again", problem);
        }
    }
}
