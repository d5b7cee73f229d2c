package io.walden.server.config;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.walden.core.internal.thread.WaldenThreads;
import io.walden.server.auth.Tokens;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Re-reads the {@code --auth-tokens} file when it changes, so that a token is added, revoked or given another role
 * without a restart (docs/operations.md, "Tokens and roles").
 *
 * <p>Every {@link #PERIOD_MILLIS} it reads the file's bytes (the file is small) and compares their SHA-256 with the
 * contents in force: a change of any byte is seen, whatever the file system's timestamps say. A change is put in force
 * only once two reads in a row, a period apart, found the same bytes, and they are a valid file: a file being written
 * in place is never taken half written (a half-written file can be valid, and wider: an entry cut before its
 * {@code logs:} line reaches every log). So a change is in force within two to three periods. The first reads after
 * the start put in force what the file holds then, quietly (it may have changed while the server started).
 *
 * <p>A file that cannot be read or is not valid changes nothing: the tokens in force stay, the error is logged once
 * per content (naming the file and the entry, as at start), and {@code walden.http.auth.tokens.file.valid} is 0 until
 * the file is valid again; {@code walden.http.auth.reloads} counts the changes {@code applied} and {@code refused}.
 *
 * <p>Threads: its own daemon thread ({@code walden-tokens}), so that a slow file system or a busy admin thread never
 * holds a revocation back; {@link #close} stops it. Every field but the meters' is that thread's.
 */
public final class TokensFileWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TokensFileWatch.class);
    /** How often the file is read. */
    public static final long PERIOD_MILLIS = 1000;

    private final ServerConfig config;
    private final Path file;
    private final Consumer<Tokens> inForce;
    private final Counter applied;
    private final Counter refused;
    private final ScheduledExecutorService thread =
            Executors.newSingleThreadScheduledExecutor(WaldenThreads.named("walden-tokens"));
    /** The SHA-256 of the contents in force; null until the first stable read after the start. */
    private byte[] appliedHash;
    /** The SHA-256 of the contents the last read found (a change waits for a second read to find them too). */
    private byte[] lastHash;
    /** The SHA-256 of the last contents refused (logged once per content), or null. */
    private byte[] refusedHash;
    private volatile boolean valid = true;

    private TokensFileWatch(ServerConfig config, Path file, Consumer<Tokens> inForce, MeterRegistry registry) {
        this.config = config;
        this.file = file;
        this.inForce = inForce;
        this.applied = reloads(registry, "applied");
        this.refused = reloads(registry, "refused");
        Gauge.builder("walden.http.auth.tokens.file.valid", this, w -> w.valid ? 1 : 0)
                .description("1 while the --auth-tokens file's contents are valid, 0 while a change of it cannot be "
                        + "used (the tokens before it stay in force)")
                .register(registry);
    }

    /**
     * Starts watching the server's tokens file, handing each new set of tokens to {@code inForce}; null when the server
     * has no tokens file.
     */
    public static TokensFileWatch start(ServerConfig config, Consumer<Tokens> inForce, MeterRegistry registry) {
        Path file = TokensFile.file(config);
        if (file == null) {
            return null;
        }
        TokensFileWatch watch = new TokensFileWatch(config, file, inForce, registry);
        watch.thread.scheduleWithFixedDelay(watch::look, PERIOD_MILLIS, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
        return watch;
    }

    private static Counter reloads(MeterRegistry registry, String result) {
        return Counter.builder("walden.http.auth.reloads").tag("result", result)
                .description("Changes of the --auth-tokens file: applied, or refused (the tokens in force stay)")
                .register(registry);
    }

    /** Reads the file; puts its tokens in force when its contents changed, held still for a period, and are valid. */
    void look() {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            lastHash = null;
            refuse(new byte[0], "auth-tokens: " + file + ": cannot read it (" + e.getClass().getSimpleName() + ")");
            return;
        }
        byte[] hash = Tokens.newDigest().digest(bytes);
        boolean held = Arrays.equals(hash, lastHash);
        lastHash = hash;
        if (Arrays.equals(hash, appliedHash)) {
            valid = true;
            refusedHash = null;
            return;
        }
        if (!held) {
            return; // changed since the last read: maybe still being written; the next read decides
        }
        Tokens next;
        try {
            next = TokensFile.of(config, TokensFile.read(file, bytes));
        } catch (RuntimeException e) {
            refuse(hash, "auth-tokens: " + e.getMessage());
            return;
        }
        boolean first = appliedHash == null;
        inForce.accept(next);
        appliedHash = hash;
        refusedHash = null;
        valid = true;
        if (first) {
            LOG.debug("The tokens of {} (auth-tokens) as they are after the start: {} token(s)", file, next.size());
        } else {
            applied.increment();
            LOG.info("Re-read the tokens of {} (auth-tokens): {} token(s) in force now", file, next.size());
        }
    }

    private void refuse(byte[] hash, String problem) {
        valid = false;
        if (!Arrays.equals(hash, refusedHash)) { // once per content, not every period while the file stays bad
            refusedHash = hash;
            refused.increment();
            LOG.error("{}; the tokens in force stay until the file is valid again", problem);
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
