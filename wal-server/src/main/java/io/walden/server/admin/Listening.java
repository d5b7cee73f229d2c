package io.walden.server.admin;

import java.util.function.Supplier;

/**
 * How the server meets its clients, for {@code /admin/status} ({@code transport}, {@code listen.http},
 * {@code auth_token_required}): what the status page shows an operator who wonders where the server listens and
 * whether a request needs the token. Thread-safety: immutable; {@code httpUrl} is read on any event loop.
 *
 * @param transport     the network transport of the event loops: epoll, io_uring or nio
 * @param httpUrl       the data and admin API's URL as bound ({@code http://127.0.0.1:7400}), read at each status:
 *                      the port is bound after the admin API is made
 * @param tokenRequired whether every endpoint but the read-only ones needs a bearer token ({@code auth-token} or
 *                      {@code auth-tokens})
 */
public record Listening(String transport, Supplier<String> httpUrl, boolean tokenRequired) {
}
