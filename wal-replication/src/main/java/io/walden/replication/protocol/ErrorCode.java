package io.walden.replication.protocol;

/**
 * The codes an Error frame carries (docs/replication-protocol.md, "Error codes"), and which of them end a replica's
 * attempts for good. A final code means reconnecting cannot help: the replica stops and reports the message until an
 * operator acts (rebuilds it, fixes its secret or version). The others say "not now": the replica retries.
 *
 * <p>The numbers are the wire's ({@link Frame.Error}'s constants); a code this version does not know (a newer peer's)
 * is taken as not final.
 */
public enum ErrorCode {
    UNSUPPORTED_VERSION(Frame.Error.UNSUPPORTED_VERSION, true),
    ANOTHER_LOG(Frame.Error.ANOTHER_LOG, true),
    LSN_REMOVED(Frame.Error.LSN_REMOVED, true),
    EPOCH_DIVERGED(Frame.Error.EPOCH_DIVERGED, true),
    AUTHENTICATION_FAILED(Frame.Error.AUTHENTICATION_FAILED, true),
    NOT_A_PRIMARY(Frame.Error.NOT_A_PRIMARY, false),
    MALFORMED(Frame.Error.MALFORMED, false),
    TOO_MANY_REPLICAS(Frame.Error.TOO_MANY_REPLICAS, false);

    private final int code;
    private final boolean fin;

    ErrorCode(int code, boolean fin) {
        this.code = code;
        this.fin = fin;
    }

    /** The number on the wire. */
    public int code() {
        return code;
    }

    /** Whether a replica told this stops reconnecting. */
    public boolean isFinal() {
        return fin;
    }

    /** The code numbered {@code code}, or null for one this version does not know. */
    public static ErrorCode of(int code) {
        for (ErrorCode c : values()) {
            if (c.code == code) {
                return c;
            }
        }
        return null;
    }
}
