package io.walden.server.config;

import io.walden.core.WalStore;
import io.walden.core.archive.ArchiveConfig;
import io.walden.core.archive.ArchiveTarget;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Where each log archives (docs/operations.md, "Backup and restore"): the log named {@code default} at the configured
 * location ({@code archive-to}) as it always did, named log {@code orders} under its sub-prefix {@code logs/orders/}
 * there (a directory archive's {@code <dir>/logs/orders/}, an S3 archive's {@code <prefix>logs/orders/}), on the same
 * client. The default log's objects never share a name with another log's: its listing shows only the objects directly
 * at the location.
 *
 * <p>In a cluster ({@code --cluster}) every server is given the same location: a named log archives under
 * {@code logs/<log>/} whichever server leads it (its objects are named by the log's epochs, so a former primary's late
 * upload never replaces its successor's), and a new copy catches up from there when its primary no longer holds the
 * start. Each server's own log {@code default}, which is not the cluster's, archives under {@code servers/<name>/}, so
 * that the servers' default logs do not write over each other (docs/cluster.md, "Archives").
 *
 * <p>Thread-safety: stateless.
 */
public final class LogArchives {
    /** The sub-prefix, at the configured location, under which the named logs archive, each under its name. */
    public static final String NAMED_LOGS = "logs/";

    private LogArchives() {
    }

    /** The sub-prefix under which a cluster's servers archive each its own log {@code default}, under its name. */
    public static final String SERVERS = "servers/";

    /**
     * The log {@code default}'s archive settings: {@code root} itself, or, on a server of a cluster, {@code root} under
     * {@code servers/<name>/} (on its client: the server closes {@code root}'s target). Null when {@code root} is.
     */
    public static ArchiveConfig defaultLog(ServerConfig config, ArchiveConfig root) {
        if (root == null || config.get(ServerSettings.CLUSTER) == null) {
            return root;
        }
        return root.under(SERVERS + config.name() + "/");
    }

    /** The sub-prefix named log {@code log} archives under: {@code logs/<log>/}. */
    public static String prefix(String log) {
        if (!WalStore.NAME.matcher(log).matches()) {
            throw new IllegalArgumentException("'" + log + "' is not a named log's name");
        }
        return NAMED_LOGS + log + "/";
    }

    /**
     * Named log {@code log}'s archive settings: those of the log {@code default} ({@code root}, from
     * {@link ServerConfig#archiveConfig()}), its objects under {@link #prefix} of the same target and on its client, which
     * closes with {@code root}'s target (the named log never closes it). Null when {@code root} is (no {@code archive-to}).
     */
    public static ArchiveConfig archiveConfig(ArchiveConfig root, String log) {
        return root == null ? null : root.under(prefix(log));
    }

    /** The names of the named logs archived in {@code root} (the log {@code default}'s target), sorted. */
    public static List<String> named(ArchiveTarget root) throws IOException {
        List<String> names = new ArrayList<>();
        for (String p : root.under(NAMED_LOGS).prefixes()) {
            if (WalStore.NAME.matcher(p).matches()) {
                names.add(p);
            }
        }
        return names;
    }
}
