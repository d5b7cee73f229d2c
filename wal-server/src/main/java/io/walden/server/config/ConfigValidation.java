package io.walden.server.config;

import io.walden.core.IllegalSettingException;
import io.walden.replication.policy.SyncPolicy;
import io.walden.server.cluster.ClusterAddress;
import io.walden.server.group.CoordinatorUri;

import static io.walden.server.config.ServerSettings.CLUSTER;
import static io.walden.server.config.ServerSettings.COORDINATOR;
import static io.walden.server.config.ServerSettings.COORDINATOR_SESSION_TIMEOUT;
import static io.walden.server.config.ServerSettings.NAME;
import static io.walden.server.config.ServerSettings.REPLICATE_FROM;
import static io.walden.server.config.ServerSettings.REPLICATION_LISTEN;
import static io.walden.server.config.ServerSettings.REPLICATION_TLS_CERT;
import static io.walden.server.config.ServerSettings.REPLICATION_TLS_KEY;
import static io.walden.server.config.ServerSettings.RESTORE_FROM;
import static io.walden.server.config.ServerSettings.SYNC_REPLICAS;
import static io.walden.server.config.ServerSettings.TLS_CERT;
import static io.walden.server.config.ServerSettings.TLS_KEY;

/**
 * Checks the settings that only make sense together, once, when they are loaded (each one alone was read into its
 * type already, see {@link ServerSettings}), so that the server stops at start with an error naming them.
 *
 * <p>Thread-safety: stateless; runs once, on the thread that starts the server.
 */
final class ConfigValidation {
    private ConfigValidation() {
    }

    /** Throws IllegalArgumentException for the first combination that is wrong. */
    static void validate(ServerConfig c) {
        if (c.get(SYNC_REPLICAS) != null) {
            SyncPolicy.parse(c.get(SYNC_REPLICAS));
            if (c.get(REPLICATION_LISTEN) != null && c.get(REPLICATION_LISTEN).address() == null) {
                throw new IllegalArgumentException("sync-replicas names replicas, but replication-listen is none: "
                        + "no replica could connect, and every durable commit at a remote level would wait for ever");
            }
        }
        try {
            c.walConfig();
        } catch (IllegalSettingException e) {
            throw c.inServerTerms(e);
        }
        if ((c.get(TLS_CERT) == null) != (c.get(TLS_KEY) == null)) {
            throw new IllegalArgumentException("tls-cert and tls-key go together: give both PEM files, or neither");
        }
        if ((c.get(REPLICATION_TLS_CERT) == null) != (c.get(REPLICATION_TLS_KEY) == null)) {
            throw new IllegalArgumentException("replication-tls-cert and replication-tls-key go together: give both PEM files, or neither");
        }
        if (c.get(RESTORE_FROM) != null && c.get(REPLICATE_FROM) == null) {
            throw new IllegalArgumentException("restore-from is for a replica (with replicate-from); to build a log from an "
                    + "archive, use 'walden restore'");
        }
        if (c.get(COORDINATOR) != null) {
            validateGroupMember(c);
        }
        if (c.get(CLUSTER) != null) {
            validateClusterServer(c);
        }
        TokensFile.of(c); // auth-token given again as an entry of auth-tokens
    }

    /** A server of a cluster: it leads some logs and follows others, each from its own primary. */
    private static void validateClusterServer(ServerConfig c) {
        ClusterAddress.parse(c.get(CLUSTER));
        if (c.get(COORDINATOR) != null || c.get(REPLICATE_FROM) != null) {
            throw new IllegalArgumentException("cluster excludes coordinator and replicate-from: in a cluster, each log "
                    + "has its own primary, placed by the cluster");
        }
        if (c.get(NAME) == null || !SyncPolicy.isValidName(c.get(NAME))) {
            throw new IllegalArgumentException("a server of a cluster needs a --name of its own, kept across restarts "
                    + "([A-Za-z0-9_.-], 1-64 characters)");
        }
        if (c.get(REPLICATION_LISTEN) == null || c.get(REPLICATION_LISTEN).address() == null) {
            throw new IllegalArgumentException("a server of a cluster needs --replication-listen: the other servers "
                    + "follow the logs it leads from there");
        }
        // Both addresses are published to the other servers and to redirected clients, who must be able to reach them.
        if (c.httpAddress().getAddress().isAnyLocalAddress()
                || c.get(REPLICATION_LISTEN).address().getAddress().isAnyLocalAddress()) {
            throw new IllegalArgumentException("a server of a cluster publishes its --http and --replication-listen "
                    + "addresses to the other servers and to clients: give addresses they reach, not a wildcard ("
                    + c.httpAddress() + ", " + c.get(REPLICATION_LISTEN).address() + ")");
        }
    }

    /** A member of a replica group (coordinator): every member may be elected the primary. */
    private static void validateGroupMember(ServerConfig c) {
        CoordinatorUri.parse(c.get(COORDINATOR));
        if (c.get(REPLICATE_FROM) != null) {
            throw new IllegalArgumentException("coordinator and replicate-from exclude each other: a member of a replica "
                    + "group follows the primary its coordinator names");
        }
        if (c.get(NAME) == null || !SyncPolicy.isValidName(c.get(NAME))) {
            throw new IllegalArgumentException("a member of a replica group (coordinator) needs a --name of its own "
                    + "([A-Za-z0-9_.-], 1-64 characters)");
        }
        if (c.get(REPLICATION_LISTEN) == null || c.get(REPLICATION_LISTEN).address() == null) {
            throw new IllegalArgumentException("a member of a replica group (coordinator) needs --replication-listen: "
                    + "any member may become the primary");
        }
        long timeout = c.get(COORDINATOR_SESSION_TIMEOUT).toMillis();
        if (timeout < 1000 || timeout > 120_000) {
            throw new IllegalArgumentException(c.given(COORDINATOR_SESSION_TIMEOUT).where() + ": must be from 1s to 120s, "
                    + "not " + c.given(COORDINATOR_SESSION_TIMEOUT).text());
        }
    }
}
