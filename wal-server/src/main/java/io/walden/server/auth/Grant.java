package io.walden.server.auth;

import java.util.List;
import java.util.stream.Collectors;

/**
 * What one request's token allows: its role, and the logs it is limited to (none: every log). The gate
 * ({@code http.RequestGate}) checks the role and the log a request's path names before the body is read; a handler
 * that touches a log its path does not name ({@code POST /v1/logs} names it in the body, {@code GET /v1/logs} lists
 * them all) asks {@link #permits} itself, through {@code Exchange.grant()}.
 *
 * @param role the role, or null for {@link #NONE} (a request that presented no token to an open endpoint)
 * @param logs the patterns a log's name must match one of; empty: every log
 *
 * <p>Thread-safety: immutable.
 */
public record Grant(Role role, List<LogGlob> logs) {
    /** Everything: the grant of every request when no token is configured, and of {@code --auth-token}. */
    public static final Grant ALL = new Grant(Role.ADMIN, List.of());
    /** Nothing: a request to an open endpoint ({@code /health}, ...) that was not checked. */
    public static final Grant NONE = new Grant(null, List.of());

    public Grant {
        logs = List.copyOf(logs);
    }

    /** Whether the holder may do what needs {@code needed} on the log named {@code log}. */
    public boolean permits(Role needed, String log) {
        return role != null && role.includes(needed) && permitsLog(log);
    }

    /** Whether the holder may touch the log named {@code log}, whatever its role. */
    public boolean permitsLog(String log) {
        if (logs.isEmpty()) {
            return role != null;
        }
        for (LogGlob glob : logs) {
            if (glob.matches(log)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether the holder is limited to some logs: such a token may not call what acts on the whole server (every
     * {@code /admin} endpoint), whatever its role.
     */
    public boolean limited() {
        return !logs.isEmpty();
    }

    /** The patterns as the tokens file gives them, for a refusal's detail ({@code orders*, audit}). */
    public String describeLogs() {
        return logs.stream().map(LogGlob::toString).collect(Collectors.joining(", "));
    }
}
