package io.walden.server.http;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.walden.server.auth.Tokens;

/**
 * The tokens a server accepts and the count of the requests the token check refused, by why
 * ({@code walden.http.auth.refusals}, tagged {@code reason}): {@code missing} (no bearer token), {@code unknown} (a token
 * no entry has), {@code role} (its role may not call the endpoint), {@code log} (its log patterns do not match the log
 * the request names, or it is limited to some logs and calls an {@code /admin} endpoint). Shared by every connection's
 * {@link RequestGate}.
 *
 * <p>The tokens may be replaced while the server runs ({@link #replace}: the {@code --auth-tokens} file re-read after it
 * changed); every request after the replacement is checked against the new ones, on every connection.
 *
 * <p>Thread-safety: the tokens are published through a volatile field (each {@link Tokens} is immutable); the counters
 * are thread-safe.
 */
public final class Access {
    private volatile Tokens tokens;
    private final Counter missing;
    private final Counter unknown;
    private final Counter role;
    private final Counter log;

    private Access(Tokens tokens, Counter missing, Counter unknown, Counter role, Counter log) {
        this.tokens = tokens;
        this.missing = missing;
        this.unknown = unknown;
        this.role = role;
        this.log = log;
    }

    /**
     * Registers the refusal counters (at zero, so a dashboard sees them before the first refusal).
     *
     * @param tokens the tokens, or null when none is configured (every endpoint is open, for the server's life)
     */
    public static Access of(Tokens tokens, MeterRegistry registry) {
        return new Access(tokens, refusals(registry, "missing"), refusals(registry, "unknown"),
                refusals(registry, "role"), refusals(registry, "log"));
    }

    private static Counter refusals(MeterRegistry registry, String reason) {
        return Counter.builder("walden.http.auth.refusals").tag("reason", reason)
                .description("Requests refused by the token check: 401 (missing, unknown), 403 (role, log)")
                .register(registry);
    }

    /** The tokens in force, or null when none is configured. */
    public Tokens tokens() {
        return tokens;
    }

    /**
     * Puts {@code next} in force for every later request.
     *
     * @throws IllegalStateException when the server started with no tokens: its connections check none, and a token
     *                               requirement cannot appear under them
     */
    public void replace(Tokens next) {
        if (tokens == null || next == null) {
            throw new IllegalStateException("tokens are replaced only by tokens, on a server that started with some");
        }
        tokens = next;
    }

    Counter missing() {
        return missing;
    }

    Counter unknown() {
        return unknown;
    }

    Counter role() {
        return role;
    }

    Counter log() {
        return log;
    }
}
