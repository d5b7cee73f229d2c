package io.walden.server.config;

import io.walden.core.archive.ArchiveConfig;
import io.walden.replication.policy.SyncPolicy;
import io.walden.server.group.CoordinatorUri;

/**
 * Checks the settings once, when they are loaded, so that a bad value stops the server at start with an error
 * naming the setting, rather than when some feature first reads it; also checks the settings that only make sense
 * together.
 *
 * <p>Thread-safety: stateless; runs once, on the thread that starts the server.
 */
final class ConfigValidation {
    private static final String[] POSITIVE = {"archive-max-pending-bytes", "max-batch-bytes", "max-readers",
            "max-connections", "max-batch-records", "stream-write-timeout-ms", "max-replicas", "max-slot-retained-bytes",
            "event-loops", "writer-delay-ms", "max-cursor-retained-bytes"};

    private ConfigValidation() {
    }

    /** Throws IllegalArgumentException for the first setting that is wrong. */
    static void validate(ServerConfig c, Settings s) {
        c.httpAddress();
        c.replicationListen();
        if (c.syncReplicas() != null) {
            SyncPolicy.parse(c.syncReplicas());
        }
        c.durability();
        c.compression();
        c.syncMethod();
        c.walConfig();
        if ((s.get("tls-cert") == null) != (s.get("tls-key") == null)) {
            throw new IllegalArgumentException("tls-cert and tls-key go together: give both PEM files, or neither");
        }
        if ((s.get("replication-tls-cert") == null) != (s.get("replication-tls-key") == null)) {
            throw new IllegalArgumentException("replication-tls-cert and replication-tls-key go together: give both PEM files, or neither");
        }
        s.bool("replication-insecure");
        s.bool("flush-on-event-loop");
        s.bool("ship-flushed-only");
        s.bool("zstd-dictionary");
        c.transport();
        c.archiveTimeout();
        ArchiveConfig.WhenFull.parse(s.get("archive-when-full"));
        for (String key : new String[] {"archive-to", "restore-from"}) {
            String archive = s.get(key);
            if (archive != null && !archive.startsWith("s3://") && !archive.startsWith("file:")) {
                throw new IllegalArgumentException(key + " is s3://bucket[/prefix] or file:///dir, not '" + archive + "'");
            }
        }
        if (c.restoreFrom() != null && c.replicateFrom() == null) {
            throw new IllegalArgumentException("restore-from is for a replica (with replicate-from); to build a log from an "
                    + "archive, use 'walden restore'");
        }
        if (c.coordinator() != null) {
            validateGroupMember(c, s);
        }
        for (String key : POSITIVE) {
            s.positive(key);
        }
    }

    /** A member of a replica group (coordinator): every member may be elected the primary. */
    private static void validateGroupMember(ServerConfig c, Settings s) {
        CoordinatorUri.parse(c.coordinator());
        if (c.replicateFrom() != null) {
            throw new IllegalArgumentException("coordinator and replicate-from exclude each other: a member of a replica "
                    + "group follows the primary its coordinator names");
        }
        if (s.get("name") == null || !SyncPolicy.isValidName(s.get("name"))) {
            throw new IllegalArgumentException("a member of a replica group (coordinator) needs a --name of its own "
                    + "([A-Za-z0-9_.-], 1-64 characters)");
        }
        if (s.get("replication-listen") == null) {
            throw new IllegalArgumentException("a member of a replica group (coordinator) needs --replication-listen: "
                    + "any member may become the primary");
        }
        long timeout = s.positive("coordinator-session-timeout-ms");
        if (timeout < 1000 || timeout > 120_000) {
            throw new IllegalArgumentException("coordinator-session-timeout-ms must be between 1000 and 120000, not " + timeout);
        }
    }
}
