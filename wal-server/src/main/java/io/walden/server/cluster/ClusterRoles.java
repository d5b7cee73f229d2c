package io.walden.server.cluster;

import io.walden.core.internal.thread.WaldenThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Helix's transitions (docs/cluster.md, "What a transition does") turned into this server's data work on its logs
 * ({@link PlacedLogs}): a log Helix wants led here is claimed and promoted; a log Helix wants replicated here follows
 * whichever server its leadership record names as primary, looked up again every {@link #WATCH_MILLIS} so that a
 * replica re-points as soon as a new primary claimed the log (Helix promotes a replica after the others became
 * replicas, and the record, not Helix's view, says who took the writes).
 *
 * <p>Threads: Helix's message threads call the transitions (never two at once for one log); the watch runs on
 * {@code walden-cluster-watch}. Thread-safety: {@link PlacedLogs} serialises the data work.
 */
public final class ClusterRoles implements LogRoles, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterRoles.class);
    static final long WATCH_MILLIS = 200;
    /**
     * How long a planned hand-over waits for the replicas to hold the log's end, and a promotion for this copy to be
     * in sync (the former primary adds it as it steps down), before either gives up.
     */
    static final long HANDOVER_MILLIS = 10_000;

    private final PlacedLogs placed;
    private final ClusterMeters meters;
    /** The logs Helix wants replicated here (REPLICA), which follow their record's primary. */
    private final Set<String> replicas = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService watch = Executors.newSingleThreadScheduledExecutor(
            WaldenThreads.named("walden-cluster-watch"));

    public ClusterRoles(PlacedLogs placed, ClusterMeters meters) {
        this.placed = placed;
        this.meters = meters;
        watch.scheduleWithFixedDelay(this::repoint, WATCH_MILLIS, WATCH_MILLIS, TimeUnit.MILLISECONDS);
    }

    /**
     * Follows the log's primary and returns once its stream is taken (caught up once), or after
     * {@link #HANDOVER_MILLIS}: Helix may promote a replica next, and a planned hand-over to one still catching up
     * would wait for it (docs/cluster.md, "The listener contract").
     */
    @Override
    public void becomeReplica(String log) throws InterruptedException {
        replicas.add(log);
        meters.placedReplica();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(HANDOVER_MILLIS);
        repoint(log);
        while (!placed.isStreaming(log) && System.nanoTime() < deadline && replicas.contains(log)) {
            Thread.sleep(50);
            repoint(log);
        }
    }

    @Override
    public void becomePrimary(String log) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(HANDOVER_MILLIS);
        replicas.remove(log); // the watch no longer points it at the old primary
        while (true) {
            try {
                meters.led(placed.lead(log));
                return;
            } catch (LeadershipRefusedException e) {
                replicas.add(log); // go on following meanwhile: it may catch up
                if (System.nanoTime() >= deadline) {
                    LOG.error("Refusing to lead log {}: {}", log, e.getMessage());
                    throw e;
                }
                Thread.sleep(WATCH_MILLIS); // still following: it may catch up, or the old primary add it as it steps down
                replicas.remove(log);
            }
        }
    }

    @Override
    public void stepDown(String log) throws Exception {
        placed.stepDown(log, HANDOVER_MILLIS);
        meters.handedOver();
        replicas.add(log);
        repoint(log);
    }

    @Override
    public void becomeOffline(String log) {
        replicas.remove(log);
        placed.release(log);
    }

    @Override
    public void drop(String log) {
        replicas.remove(log);
        placed.drop(log);
        meters.dropped();
    }

    @Override
    public void sessionEnded(String log) {
        replicas.remove(log);
        try {
            placed.release(log);
        } catch (RuntimeException e) {
            LOG.error("Could not stop serving log {} after the cluster session ended: {}", log, e.toString());
        }
    }

    /**
     * Nothing to stop here: no primary of a log can acknowledge without every in-sync replica, and a server Helix
     * promotes elsewhere stops following this one before it claims the log, so a primary cut off from ZooKeeper
     * acknowledges nothing another primary lacks (docs/cluster.md, "Who may lead a log"). Its commits wait, and fail
     * once it finds itself deposed.
     */
    @Override
    public void connectionLost() {
        LOG.warn("Lost the cluster's ZooKeeper: the logs led here acknowledge only what their in-sync replicas hold");
    }

    @Override
    public void connectionRestored() {
        LOG.info("The cluster's ZooKeeper is back");
    }

    private void repoint() {
        for (String log : replicas) {
            repoint(log);
        }
    }

    /** A replica log follows the primary its record names, once there is one other than this server. */
    private void repoint(String log) {
        try {
            LeadershipRecord record = placed.leadership().read(log);
            String primary = record.primary();
            if (primary != null && !primary.equals(placed.self()) && replicas.contains(log)) {
                placed.followUnlessLed(log, primary); // nothing when it already follows that server
            }
        } catch (Exception e) {
            LOG.warn("Could not point log {} at its primary: {}; trying again", log, e.toString());
        }
    }

    @Override
    public void close() {
        watch.shutdownNow();
        try {
            watch.awaitTermination(10, TimeUnit.SECONDS); // a repoint in progress must not start a client after this
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
