package io.walden.server.auth;

import java.util.Locale;

/**
 * What a token may do (docs/operations.md, "Tokens and roles"). Each role holds the ones before it: {@link #APPEND}
 * may do what {@link #READ} may, {@link #ADMIN} what both may. The route table ({@code http.Routes}) declares the role
 * each endpoint needs.
 *
 * <p>Thread-safety: an enum.
 */
public enum Role {
    /** Reads, streams and cursors; the list and descriptions of logs. */
    READ,
    /** Reads, plus appends (single and batch). */
    APPEND,
    /** Everything: creating, changing and deleting logs, and every {@code /admin} endpoint. */
    ADMIN;

    /** Whether a holder of this role may call an endpoint that needs {@code needed}. */
    public boolean includes(Role needed) {
        return ordinal() >= needed.ordinal();
    }

    /** The role's name in the tokens file and on the command line: {@code read}, {@code append}, {@code admin}. */
    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * @throws IllegalArgumentException naming the roles there are
     */
    public static Role parse(String text) {
        for (Role r : values()) {
            if (r.configName().equals(text)) {
                return r;
            }
        }
        throw new IllegalArgumentException("unknown role '" + text + "' (read, append or admin)");
    }
}
