package io.walden.server.logs;

/**
 * A request about a named log that the server refuses, with nothing changed: the HTTP API answers each reason with its
 * status and error code (docs/http-api.md, "Logs").
 */
public final class LogRefusedException extends RuntimeException {
    /** Why, with the status and code the HTTP API answers. */
    public enum Reason {
        NOT_FOUND(404, "log_not_found"),
        EXISTS(409, "log_exists"),
        TOO_MANY(409, "too_many_logs"),
        HELD(409, "log_held"),
        /** The log {@code default}, or a setting walden.yaml declares: changed where it is set, not over HTTP. */
        SETTINGS_FIXED(409, "log_settings_fixed"),
        /** The log {@code default} is the server's own: never deleted. */
        DEFAULT_LOG(409, "default_log"),
        /** A replica: its logs are its primary's, created, changed and deleted there. */
        FOLLOWING(409, "not_a_primary"),
        /** A drain of the only live server of a cluster: its logs would have nowhere to go. */
        NO_OTHER_SERVER(409, "no_other_server"),
        /** A cluster's log that no server leads at the moment (a failover, a move): nothing was done (retry). */
        NO_PRIMARY(503, "no_primary"),
        /** A cluster's ZooKeeper did not answer: nothing was changed (retry). */
        CLUSTER_UNAVAILABLE(503, "cluster_unavailable"),
        /** The server is stopping: no log is created any more. */
        STOPPING(503, "shutting_down");

        private final int status;
        private final String code;

        Reason(int status, String code) {
            this.status = status;
            this.code = code;
        }

        public int status() {
            return status;
        }

        public String code() {
            return code;
        }
    }

    private final Reason reason;

    public LogRefusedException(Reason reason, String detail) {
        super(detail, null, false, false); // an answer, not a defect: no stack trace to fill
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
