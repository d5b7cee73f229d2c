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
 * @param tokens the tokens, or null when none is configured (every endpoint is open)
 *
 * <p>Thread-safety: immutable; the counters are thread-safe.
 */
public record Access(Tokens tokens, Counter missing, Counter unknown, Counter role, Counter log) {
    /** Registers the refusal counters (at zero, so a dashboard sees them before the first refusal). */
    public static Access of(Tokens tokens, MeterRegistry registry) {
        return new Access(tokens, refusals(registry, "missing"), refusals(registry, "unknown"),
                refusals(registry, "role"), refusals(registry, "log"));
    }

    private static Counter refusals(MeterRegistry registry, String reason) {
        return Counter.builder("walden.http.auth.refusals").tag("reason", reason)
                .description("Requests refused by the token check: 401 (missing, unknown), 403 (role, log)")
                .register(registry);
    }
}
