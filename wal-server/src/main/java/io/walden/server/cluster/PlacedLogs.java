package io.walden.server.cluster;

import io.walden.core.Epoch;
import io.walden.core.Wal;
import io.walden.core.internal.thread.WaldenThreads;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.primary.ReplicationServer;
import io.walden.replication.replica.StoreReplicaClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The data work of a cluster server's roles (docs/cluster.md, "What a transition does"): for each log Helix places
 * here, this server either leads it ({@link #lead}), follows it from its primary's server ({@link #follow}), or holds
 * it idle ({@link #release}) or not at all ({@link #drop}). A log is led only after its leadership record was claimed
 * ({@link LogLeadership}); a log is followed over the one connection this server keeps to each primary server (a
 * {@link StoreReplicaClient} of chosen logs). The in-sync sets of the logs led here are kept by {@link InSyncSets}.
 *
 * <p>Thread-safety: each log's transitions run one at a time under that log's own lock, so that each sees the last
 * one's effects, while another log's go on: a hand-over that waits up to 10 s for a replica holds back no other log's
 * failover. The connections to primary servers, which logs share, are kept under one short lock ({@link #clients}),
 * always taken inside a log's lock, never the other way round.
 */
public final class PlacedLogs implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PlacedLogs.class);

    /** Starts a replica client of chosen logs (none yet) of the primary server at the address given. */
    @FunctionalInterface
    public interface Clients {
        StoreReplicaClient start(InetSocketAddress primary, Set<String> logs);
    }

    /**
     * A lead taken: its epoch, and whether it was a failover: the log had a primary before, which did not step down in a
     * planned hand-over (its server died, was cut off, or restarted).
     */
    public record Led(Epoch epoch, boolean failover) {
    }

    private final String self;
    private final HeldLogs store;
    private final ReplicationServer endpoint;
    private final LogLeadership leadership;
    private final Function<String, InetSocketAddress> replicationAddress;
    private final Clients newClient;
    /** Each log's lock: its transitions run one at a time. Never removed (a few bytes per log ever placed here). */
    private final Map<String, Object> logLocks = new ConcurrentHashMap<>();
    /** Guards the connections to primary servers: which exist, and which logs each carries. */
    private final Object clients = new Object();
    /** Written under {@link #clients}, read without it ({@link #isStreaming}). */
    private final Map<String, StoreReplicaClient> byPrimary = new ConcurrentHashMap<>();
    /** Written under the lock, read without it ({@link #followedFrom(String)}: requests for a log ask). */
    private final Map<String, String> followedFrom = new ConcurrentHashMap<>();
    /** Written under the lock, read without it ({@link #isLed}: every request for a log asks). */
    private final Map<String, LeadershipRecord> led = new ConcurrentHashMap<>();
    /** Keeps the in-sync sets of the logs led here, every {@link #CHECK_MILLIS}. */
    private final ScheduledExecutorService keeper = Executors.newSingleThreadScheduledExecutor(
            WaldenThreads.named("walden-in-sync"));
    static final long CHECK_MILLIS = 200;
    static final long SLOT_CHECK_MILLIS = 1_000;

    /**
     * @param self               this server's name ({@code --name}), as replicas and records name it
     * @param endpoint           this server's replication endpoint, serving {@code store}'s logs
     * @param replicationAddress another server's replication address, by its name
     * @param lagMillis          how long an in-sync replica may not acknowledge before the primary drops it from the
     *                           in-sync set (commits at {@code on} wait for it that long at most)
     * @param placedOn           the servers Helix places a log's copies on, now or next; empty for a log it does not
     *                           know: the slots of other servers on a log led here are dropped ({@link FormerReplicaSlots})
     */
    public PlacedLogs(String self, HeldLogs store, ReplicationServer endpoint, LogLeadership leadership,
                      Function<String, InetSocketAddress> replicationAddress, Clients clients, long lagMillis,
                      Function<String, Optional<Set<String>>> placedOn) {
        this.self = self;
        this.store = store;
        this.endpoint = endpoint;
        this.leadership = leadership;
        this.replicationAddress = replicationAddress;
        this.newClient = clients;
        for (String log : store.names()) { // none is led here until claimed: a server that restarts leads nothing
            store.log(log).ifPresent(wal -> wal.replication().refuseAppends("this server does not lead log " + log
                    + " (yet): write to its primary"));
        }
        InSyncSets sets = new InSyncSets(this, lagMillis);
        keeper.scheduleWithFixedDelay(sets::check, CHECK_MILLIS, CHECK_MILLIS, TimeUnit.MILLISECONDS);
        FormerReplicaSlots slots = new FormerReplicaSlots(this, placedOn, FormerReplicaSlots.GRACE_MILLIS);
        keeper.scheduleWithFixedDelay(() -> {
            try {
                slots.check();
            } catch (RuntimeException e) {
                LOG.warn("Could not check the replication slots of the logs led here: {}; trying again", e.toString());
            }
        }, SLOT_CHECK_MILLIS, SLOT_CHECK_MILLIS, TimeUnit.MILLISECONDS);
    }

    /**
     * Leads log {@code log} (Helix's SLAVE→MASTER, or OFFLINE→MASTER for a new log): stops following it (what it
     * received is forced), claims its leadership record, and only then takes appends, in the record's epoch. A log no
     * server led yet is created here.
     *
     * @return the epoch it leads in, and whether it took the log over in a failover
     * @throws LeadershipRefusedException when the record refuses (not in sync; the record changed meanwhile; led before
     *                                    but not held here): the log takes no appends here
     */
    public Led lead(String log) throws Exception {
        synchronized (lockOf(log)) {
            return leadLocked(log);
        }
    }

    private Led leadLocked(String log) throws Exception {
        LeadershipRecord before = leadership.read(log);
        if (!before.isNone() && !before.isInSync(self)) { // refused while it still follows: it may yet catch up
            throw new LeadershipRefusedException("log " + log + ": " + self + " is not in sync (in sync: "
                    + before.inSync() + ", epoch " + before.epoch() + ")");
        }
        stopFollowing(log);
        LeadershipRecord seen = leadership.read(log); // after: every acknowledgement it sent covered what it holds
        Optional<Wal> held = store.log(log);
        if (held.isEmpty() && !seen.isNone()) {
            throw new LeadershipRefusedException("log " + log + " was led before (epoch " + seen.epoch() + " by "
                    + seen.primary() + ") and " + self + " holds no copy of it");
        }
        Wal wal = held.orElseGet(() -> store.create(log));
        LeadershipRecord claimed = leadership.claim(log, self, seen, wal.status().epoch() + 1);
        // The waits for the in-sync replicas before the first append: none may be acknowledged without them.
        endpoint.logPolicy(log, InSyncSets.policyOf(claimed.inSync(), self));
        endpoint.refreshLogs();
        led.put(log, claimed);
        Epoch epoch = wal.replication().promote(claimed.epoch());
        boolean failover = !seen.isNone() && !seen.steppedDown();
        LOG.info("Leading log {} in epoch {} (in sync: {}){}", log, epoch.number(), claimed.inSync(),
                failover ? ", a failover from " + seen.primary() + " in epoch " + seen.epoch() : "");
        return new Led(epoch, failover);
    }

    /**
     * Follows log {@code log} from the server named {@code primary} (Helix's OFFLINE→SLAVE, or MASTER→SLAVE): stops
     * taking appends here first if it led it, then follows it over the connection to that server (a copy is created if
     * it is not held; a copy that ran ahead of the primary is rewound by the stream's history check).
     */
    public void follow(String log, String primary) {
        synchronized (lockOf(log)) {
            followLocked(log, primary);
        }
    }

    private void followLocked(String log, String primary) {
        if (primary.equals(self)) {
            throw new IllegalArgumentException("a server does not follow its own log " + log);
        }
        InetSocketAddress at = replicationAddress.apply(primary);
        StoreReplicaClient current = byPrimary.get(primary);
        if (primary.equals(followedFrom.get(log)) && current != null && current.primary().equals(at)) {
            return;
        }
        stopLeading(log);
        stopFollowing(log);
        if (store.log(log).isEmpty()) { // a copy begins here: it may not count as in sync until it has caught up
            leaveInSyncSet(log);
        }
        synchronized (clients) {
            current = byPrimary.get(primary);
            if (current != null && !current.primary().equals(at)) { // that server came back at another address
                current.close();
                byPrimary.remove(primary);
                followedFrom.values().removeIf(primary::equals); // their logs follow it again at their next repoint
            }
            StoreReplicaClient client = byPrimary.computeIfAbsent(primary, name -> newClient.start(at, Set.of()));
            client.follow(log);
            followedFrom.put(log, primary);
        }
        LOG.info("Following log {} from {}", log, primary);
    }

    /**
     * Hands log {@code log} over (Helix's MASTER→SLAVE, a planned move): takes no more appends, then waits up to
     * {@code waitMillis} until at least one replica flushed the log's end and every streaming replica did (a copy Helix
     * just placed may still be connecting), and adds each that did to the in-sync set, so that whichever Helix promotes
     * next may lead; then stops leading (commits still waiting fail as unconfirmed). Safe
     * without the wait: a replica that did not catch up is simply not in sync, and is refused the log.
     */
    public void stepDown(String log, long waitMillis) throws Exception {
        synchronized (lockOf(log)) {
            stepDownLocked(log, waitMillis);
        }
    }

    private void stepDownLocked(String log, long waitMillis) throws Exception {
        LeadershipRecord record = led.get(log);
        Wal wal = store.log(log).orElse(null);
        if (record == null || wal == null) {
            stopLeading(log);
            return;
        }
        // Paused, not refused: its replicas go on receiving everything it holds, to catch up with its end.
        wal.replication().pauseAppends("log " + log + " is being handed to another server: write to its primary");
        try {
            record = handOver(log, wal, record, waitMillis);
            record = leadership.stepDown(log, self, record.epoch());
        } catch (LeadershipRefusedException deposed) {
            LOG.warn("Log {} was led by another server as it stepped down: {}", log, deposed.getMessage());
        } finally {
            stopLeading(log);
        }
        LOG.info("Stepped down from log {} (in sync: {})", log, record.inSync());
    }

    /**
     * Waits up to {@code waitMillis} for the paused log's replicas to flush its end, and adds those that did to the
     * in-sync set; returns the record as last written.
     */
    private LeadershipRecord handOver(String log, Wal wal, LeadershipRecord record, long waitMillis) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
        long end = wal.replication().drainAppends(waitMillis, TimeUnit.MILLISECONDS);
        if (end < 0) {
            return record; // appends in flight did not leave: no end to hand over; no replica is added
        }
        wal.flush();
        Set<String> caughtUp = new TreeSet<>();
        while (true) {
            boolean anyBehind = false;
            for (var r : endpoint.replicaStatus(log)) {
                if (r.isStreaming() && r.flushLsn() >= end) {
                    caughtUp.add(r.name());
                } else if (r.isStreaming()) {
                    anyBehind = true;
                }
            }
            if (!caughtUp.isEmpty() && !anyBehind || System.nanoTime() >= deadline) {
                break; // a replica to hand over to, and none still catching up that could be the one Helix picks
            }
            Thread.sleep(20);
        }
        LeadershipRecord now = record;
        for (String replica : caughtUp) {
            try {
                now = leadership.expand(log, self, now.epoch(), replica);
            } catch (LeadershipRefusedException e) {
                LOG.warn("Could not add {} to log {}'s in-sync set as it is handed over: {}", replica, log, e.getMessage());
                break;
            }
        }
        return now;
    }

    /**
     * {@link #follow}, unless this server leads log {@code log} by now (a promotion that ran while the caller looked the
     * primary up): decided under the lock that promotions take.
     */
    public void followUnlessLed(String log, String primary) {
        synchronized (lockOf(log)) {
            if (!led.containsKey(log)) {
                followLocked(log, primary);
            }
        }
    }

    /** The server this server's copy of log {@code log} follows now (its leader, as its record named it), or null. */
    public String followedFrom(String log) {
        return followedFrom.get(log);
    }

    /** Whether log {@code log}'s stream from its primary is taken (it follows, and caught up once). */
    public boolean isStreaming(String log) {
        String from = followedFrom.get(log);
        StoreReplicaClient client = from == null ? null : byPrimary.get(from);
        return client != null && client.isStreaming(log);
    }

    /** Holds log {@code log} without leading or following it (Helix's →OFFLINE): it takes no appends here. */
    public void release(String log) {
        synchronized (lockOf(log)) {
            stopLeading(log);
            stopFollowing(log);
        }
    }

    /** Deletes this server's copy of log {@code log} (Helix's OFFLINE→DROPPED: placed elsewhere, or deleted). */
    public void drop(String log) {
        synchronized (lockOf(log)) {
            release(log);
            endpoint.inheritPolicy(log);
            if (store.log(log).isPresent()) {
                leaveInSyncSet(log); // its primary stops waiting for this copy now, not after the lag
                store.delete(log);
                endpoint.refreshLogs();
                LOG.info("Dropped this server's copy of log {}", log);
            }
        }
    }

    /** How many logs this server leads now; without the lock (a gauge reads it). */
    int ledCount() {
        return led.size();
    }

    /** How many logs this server follows now; without the lock (a gauge reads it). */
    int followedCount() {
        return followedFrom.size();
    }

    /** Takes this server out of log {@code log}'s in-sync set, as a server that holds no copy of it (now, or soon). */
    private void leaveInSyncSet(String log) {
        try {
            leadership.leave(log, self);
        } catch (Exception e) {
            throw new IllegalStateException("log " + log + ": could not leave its in-sync set, which a server without a"
                    + " copy must: " + e.getMessage(), e);
        }
    }

    private Object lockOf(String log) {
        return logLocks.computeIfAbsent(log, l -> new Object());
    }

    /** Whether this server leads log {@code log} now; without the lock, for every request that names a log. */
    public boolean isLed(String log) {
        return led.containsKey(log);
    }

    /**
     * The logs led here, with their records as last written by this server; without the lock, so that the in-sync
     * keeper goes on while a transition waits (a hand-over waits for a replica to catch up).
     */
    Map<String, LeadershipRecord> led() {
        return new HashMap<>(led);
    }

    /** Log {@code log}'s record changed by this server (an in-sync set kept): waits follow it. */
    void recorded(String log, LeadershipRecord now) {
        led.computeIfPresent(log, (l, before) -> now);
    }

    /** This server no longer leads log {@code log} (deposed): it takes no more appends. */
    void deposed(String log, String why) {
        synchronized (lockOf(log)) {
            if (led.containsKey(log)) {
                LOG.error("No longer leading log {}: {}; it takes no appends here", log, why);
                stopLeading(log);
            }
        }
    }

    /** The logs this server follows, by primary server. */
    public Map<String, Set<String>> followed() {
        Map<String, Set<String>> out = new HashMap<>();
        followedFrom.forEach((log, primary) -> out.computeIfAbsent(primary, p -> new TreeSet<>()).add(log));
        return out;
    }

    String self() {
        return self;
    }

    ReplicationServer endpoint() {
        return endpoint;
    }

    LogLeadership leadership() {
        return leadership;
    }

    Optional<Wal> log(String log) {
        return store.log(log);
    }

    /**
     * Takes no more appends on log {@code log}, and fails the commits still waiting for replicas as unconfirmed (their
     * records are durable here only): its policy stays, so that nothing is released as if it were {@code local}.
     */
    private void stopLeading(String log) {
        if (led.remove(log) != null) {
            store.log(log).ifPresent(wal -> {
                String why = "this server no longer leads log " + log + ": write to its primary";
                wal.replication().refuseAppends(why);
                wal.replication().remoteWaits().detach(why);
            });
        }
    }

    /**
     * Under the log's lock: takes the clients' lock itself. A connection no log follows any more is closed after that
     * lock is let go (a close waits for its threads): another log may meanwhile start a new one to the same server.
     */
    private void stopFollowing(String log) {
        StoreReplicaClient idle = null;
        synchronized (clients) {
            String from = followedFrom.remove(log);
            StoreReplicaClient client = from == null ? null : byPrimary.get(from);
            if (client == null) {
                return; // not following, or its connection was replaced (that server came back at another address)
            }
            if (!client.unfollow(log)) {
                throw new IllegalStateException("log " + log + "'s receiver is stuck (a flush never ended): see the log");
            }
            if (!followedFrom.containsValue(from)) { // nothing more follows that server: its connection and threads go
                idle = byPrimary.remove(from);
            }
        }
        if (idle != null) {
            idle.close();
        }
    }

    /** Stops every connection to a primary server; the logs stay open, each as it is. */
    @Override
    public void close() {
        keeper.shutdownNow();
        synchronized (clients) {
            for (StoreReplicaClient c : List.copyOf(byPrimary.values())) {
                c.close();
            }
            byPrimary.clear();
            followedFrom.clear();
        }
    }
}
