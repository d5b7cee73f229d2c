package io.walden.server.cluster;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Resets this server's copies that Helix holds in ERROR (docs/cluster.md, "The listener contract"). A copy is in ERROR
 * when a transition threw here, most often a promotion Walden refused (the copy was not in sync); Helix then leaves it
 * alone until someone resets it, places no copy in its stead, and, while any log is in ERROR, moves nothing for balance
 * anywhere in the cluster. So once a copy has been in ERROR for {@link #grace} it is reset (Helix's
 * {@code resetPartition}: ERROR → OFFLINE), after which Helix places it again, as a replica that catches up, or, if it
 * is the log's only copy left, asks it to lead again (which it refuses again while it still must not: a retry each
 * grace, said in the log, never a primary that lacks acknowledged records).
 *
 * <p>Thread-safety: {@link #check} from one thread at a time (the cluster view's refresher).
 */
public final class ErrorCopies {
    private static final Logger LOG = LoggerFactory.getLogger(ErrorCopies.class);
    /** How long a copy stays in ERROR before it is reset: long enough for an operator to see it, short next to a day. */
    public static final long GRACE_MILLIS = 10_000;

    private final ClusterLogs logs;
    private final String self;
    private final long grace;
    /** Log name → when its copy here was first seen in ERROR (System.nanoTime). */
    private final Map<String, Long> since = new HashMap<>();

    public ErrorCopies(ClusterLogs logs, String self, long graceMillis) {
        this.logs = logs;
        this.self = self;
        this.grace = TimeUnit.MILLISECONDS.toNanos(graceMillis);
    }

    /** Looks at {@code placements} (every log's, as last read) and resets the copies in ERROR here for the grace. */
    public void check(Map<String, Placement> placements) {
        long now = System.nanoTime();
        since.keySet().retainAll(placements.keySet());
        placements.forEach((log, p) -> {
            if (p.current().get(self) != Role.ERROR) {
                since.remove(log);
                return;
            }
            long first = since.computeIfAbsent(log, l -> now);
            if (now - first < grace) {
                return;
            }
            LOG.warn("Log {}: this server's copy has been in ERROR for {} s (a promotion refused, or a transition that "
                    + "failed: see above); asking Helix to reset it, after which it is placed again", log,
                    TimeUnit.NANOSECONDS.toSeconds(now - first));
            try {
                logs.reset(log, self);
                since.remove(log);
            } catch (RuntimeException e) {
                LOG.warn("Log {}: could not reset this server's copy ({}); trying again", log, e.toString());
                since.put(log, now); // again after another grace
            }
        });
    }
}
