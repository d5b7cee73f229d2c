package io.walden.server.group;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.walden.core.Epoch;
import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.core.WalClosedException;
import io.walden.core.WalConfig;
import io.walden.core.WalStatus;
import io.walden.core.WalStore;
import io.walden.core.internal.thread.WaldenThreads;
import io.walden.replication.policy.SyncPolicy;
import io.walden.server.ReplicationRole;
import io.walden.server.config.ServerConfig;
import io.walden.server.logs.LogCatalog;
import io.walden.server.logging.Units;
import org.apache.curator.framework.state.ConnectionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.walden.server.config.ServerSettings.COORDINATOR;
import static io.walden.server.config.ServerSettings.SYNC_REPLICAS;

/**
 * A member of a replica group (docs/operations.md, "Replica groups"): registers with the coordinator, follows the
 * primary the epoch record names, takes part in elections by {@link ElectionRule} (copying the tails it lacks when the
 * election plans so: {@link TailCopy}; and serving its own to another member, {@link #heldLog}), promotes itself when it wins,
 * fences itself when it loses its session, hands over on a switchover, and rejoins as a replica when it finds a
 * newer epoch than the one it led.
 *
 * <p>Fencing: the ZooKeeper client reports a connection as lost when it has heard nothing for two thirds of the
 * session timeout; the server expires the session, and only then can the latch pass to another member, no earlier
 * than a whole session timeout after it last heard from this member. Every such figure is the timeout ZooKeeper
 * granted the session ({@link GroupCoordinator#sessionTimeoutMs}), which may differ from the one asked for. The primary refuses appends and closes its
 * replication endpoint (so that no replica's confirmation releases a commit) on that first report, on Curator's
 * event thread; a tick every {@value #TICK_MILLIS} ms checks the connection as well. The margin is a third of the
 * session timeout, less a round trip.
 *
 * <p>Threads: one ({@code walden-group}) runs the ticks and every role change; the fence on a lost connection runs
 * on Curator's event thread and only refuses and closes. Status readers see volatile snapshots.
 */
public final class FailoverController implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FailoverController.class);
    static final long TICK_MILLIS = 100;
    /** After a failed copy of tails, the next try waits this long (each failure is logged at WARN). */
    private static final long COPY_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final ServerConfig config;
    private final String name;
    private final SyncPolicy policy;
    private final GroupCoordinator coordinator;
    private final ScheduledExecutorService loop = Executors.newSingleThreadScheduledExecutor(
            WaldenThreads.named("walden-group"));
    private final AtomicLong elections = new AtomicLong();
    private final AtomicLong sessionLosses = new AtomicLong();
    /**
     * Suspensions and losses of the session, counted by Curator's event thread: a claim compares it before and after,
     * so that a suspension reported while it was not yet PRIMARY (and so fenced nothing) still fences it.
     */
    private final AtomicLong disconnects = new AtomicLong();
    /** Set once this member left the group for good (its log failed): the tick does nothing more. */
    private volatile boolean left;
    private Wal wal;
    /** Every log of the member: followed, promoted, fenced and handed over with {@code wal} ({@code default}). */
    private LogCatalog logs;
    private ReplicationRole role;
    private volatile Member.State state;
    private volatile EpochRecord epochView;
    private volatile Map<String, Member> membersView = Map.of();
    private volatile String electionNote;
    /** The epoch record's version as this member wrote it when it became primary: any other version means it is not. */
    private int ledVersion = -1;
    private long handoverDeadline;
    private Member published;
    /** The tails the election plans for this member when positions cross; its next try no sooner than nextCopy. */
    private TailCopy tails;
    private long nextCopy = System.nanoTime();

    private FailoverController(ServerConfig config) {
        this.config = config;
        this.name = config.name();
        this.policy = config.get(SYNC_REPLICAS) == null ? null : SyncPolicy.parse(config.get(SYNC_REPLICAS));
        this.coordinator = new GroupCoordinator(CoordinatorUri.parse(config.get(COORDINATOR)), name,
                config.coordinatorSessionTimeoutMillis(), this::onConnectionState);
    }

    /** Connects to the coordinator and registers this member (before its log is opened). */
    public static FailoverController join(ServerConfig config) throws InterruptedException {
        FailoverController c = new FailoverController(config);
        c.state = config.hasLog() ? Member.State.STARTING : Member.State.LOOKING;
        try {
            c.coordinator.start(c.self(0, 0, Map.of()), 30_000);
        } catch (RuntimeException | InterruptedException e) {
            c.coordinator.close();
            throw e;
        }
        LOG.info("Member '{}' joined the group at {} (session timeout {}, {} asked for)", c.name, c.coordinator.uri(),
                Units.millis(c.coordinator.sessionTimeoutMs()), Units.millis(c.coordinator.requestedSessionTimeoutMs()));
        return c;
    }

    /**
     * Opens this member's log: its own when it has one; else a copy of the primary's (a new replica), or, in a new
     * group where it is elected, a new log. Waits (logging) until one of them is possible.
     */
    public Wal openLog(WalConfig.Builder log) throws Exception {
        return MemberLog.open(config, coordinator, policy, log);
    }

    /** Starts taking part: follows, elects, leads, with every log of {@code catalog}. The role starts as a standby. */
    public void start(Wal log, LogCatalog catalog, ReplicationRole replication, MeterRegistry registry) {
        this.wal = log;
        this.logs = catalog;
        this.role = replication;
        this.tails = new TailCopy(config, log, catalog);
        state = Member.State.LOOKING;
        FunctionCounter.builder("walden.coordinator.elections", elections, AtomicLong::get)
                .description("Times this member became the group's primary").register(registry);
        FunctionCounter.builder("walden.coordinator.session.losses", sessionLosses, AtomicLong::get)
                .description("Times this member's coordinator session was lost").register(registry);
        Gauge.builder("walden.coordinator.connected", this, c -> c.coordinator.isConnected() ? 1 : 0)
                .description("1 while connected to the coordinator").register(registry);
        Gauge.builder("walden.coordinator.primary", this, c -> c.state == Member.State.PRIMARY ? 1 : 0)
                .description("1 while this member is the group's primary").register(registry);
        loop.scheduleWithFixedDelay(this::tick, 0, TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** On Curator's event thread: a primary that may have lost its session stops acknowledging now. */
    private void onConnectionState(ConnectionState s) {
        if (s == ConnectionState.LOST) {
            sessionLosses.incrementAndGet();
        }
        if (s == ConnectionState.SUSPENDED || s == ConnectionState.LOST) {
            disconnects.incrementAndGet(); // before the state is read: see claim()
        }
        if ((s == ConnectionState.SUSPENDED || s == ConnectionState.LOST) && state == Member.State.PRIMARY) {
            fence("this member lost its coordinator connection (" + s + "): it may no longer be the primary");
        }
        LOG.info("Coordinator connection: {}", s);
    }

    void fence(String reason) {
        state = Member.State.FENCED;
        role.fence(reason + "; see /admin/status for the group's primary");
        LOG.warn("Fenced: {}", reason);
    }

    private synchronized void tick() {
        if (left) {
            return;
        }
        try {
            step();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.warn("Group step failed (retrying): {}", e.toString());
        } catch (Throwable e) { // an Error would cancel the tick for good: leave rather than linger in the group
            LOG.error("Group step failed; this member leaves its group", e);
            leave("an internal error: " + e);
        }
    }

    /** Fences if primary, then leaves the group for good: the latch, the member node and the session go. */
    private void leave(String why) {
        if (state == Member.State.PRIMARY) {
            fence(why);
        }
        state = Member.State.FAILED;
        left = true;
        coordinator.close();
        LOG.error("This member left its replica group ({}): restart it once fixed", why);
    }

    private void step() throws Exception {
        if (wal.status().isFailed() || wal.isClosed()) {
            // Another member can lead, and nobody waits for this one: its node goes with its session.
            leave("its log failed: " + wal.status().failureReason());
            return;
        }
        if (!coordinator.isConnected()) {
            if (state == Member.State.PRIMARY) {
                fence("this member is not connected to its coordinator");
            }
            return;
        }
        EpochRecord epoch = coordinator.epoch();
        Map<String, Member> live = coordinator.members();
        epochView = epoch;
        membersView = live;
        switch (state) {
            case PRIMARY -> checkStillPrimary(epoch);
            case FENCED -> afterFence(epoch, live);
            case REPLICA -> followOrLook(epoch, live);
            case FAILED -> { } // until restarted: published so that nobody waits for it
            default -> look(epoch, live);
        }
        publish();
    }

    private void checkStillPrimary(EpochRecord epoch) {
        if (!coordinator.leads()) {
            fence("this member no longer holds the group's leadership");
        } else if (epoch == null || !epoch.primary().equals(name) || epoch.version() != ledVersion) {
            fence("the epoch record no longer names this member (" + epoch + ")");
        }
    }

    private void afterFence(EpochRecord epoch, Map<String, Member> live) {
        boolean mine = epoch != null && epoch.primary().equals(name);
        if (mine && epoch.handoverTo() != null && System.nanoTime() < handoverDeadline) {
            return; // the switchover's target is taking over
        }
        if (!mine && followPrimary(epoch, live)) {
            return;
        }
        state = Member.State.LOOKING; // the primary is gone, or it was this one: an election decides
    }

    private void followOrLook(EpochRecord epoch, Map<String, Member> live) {
        Member primary = epoch == null ? null : live.get(epoch.primary());
        if (epoch != null && name.equals(epoch.handoverTo())) {
            role.stopFollowing(); // the primary hands over to this member: it stopped appending and closed
            state = Member.State.LOOKING;
        } else if (primary == null || primary.state() == Member.State.LOOKING || primary.name().equals(name)) {
            role.stopFollowing();
            state = Member.State.LOOKING;
            LOG.info("The primary {} is gone: this member stops following and reports its final position {}",
                    epoch == null ? null : epoch.primary(), Lsn.format(wal.flushedLsn()));
        } else if (primary.state() == Member.State.PRIMARY) {
            role.follow(primary.replicationAddress(), primary.http());
        } // a fenced primary whose session lives may resume: keep following it
        String refused = role.replica() == null ? null : role.replica().anyLogFatalError();
        if (state == Member.State.REPLICA && refused != null) {
            state = Member.State.FAILED;
            LOG.error("The primary refused this member for good ({}): it takes no part in elections until rebuilt "
                    + "(stop it, empty its data directory, start it)", refused);
        }
    }

    private void look(EpochRecord epoch, Map<String, Member> live) throws Exception {
        if (followPrimary(epoch, live)) {
            coordinator.leaveLatch();
            return;
        }
        if (epoch == null && coordinator.inLatch() && coordinator.leads()) {
            claim(null); // a new group: the latch decides between members that both thought themselves the candidate
            return;
        }
        boolean mine = epoch != null && epoch.primary().equals(name);
        boolean takeBack = mine && epoch.handoverTo() != null && System.nanoTime() >= handoverDeadline;
        ElectionRule.Election election = ElectionRule.decide(epoch, live, policy);
        if (election.candidate() == null && !election.reason().equals(electionNote)) {
            LOG.info("No member can be elected yet: {}", election.reason());
        }
        electionNote = election.reason();
        ElectionRule.CatchUp plan = election.catchUp();
        if (plan != null && name.equals(plan.member()) && System.nanoTime() - nextCopy >= 0
                && !tails.copy(plan, live)) {
            nextCopy = System.nanoTime() + COPY_RETRY_NANOS; // held or not, the positions are published after this step
        }
        if (takeBack || name.equals(election.candidate())) {
            coordinator.joinLatch();
            if (coordinator.leads()) {
                claim(epoch);
            }
        } else {
            coordinator.leaveLatch();
        }
    }

    /** Follows the primary the record names when it is another member and serving; true when it does. */
    private boolean followPrimary(EpochRecord epoch, Map<String, Member> live) {
        if (epoch == null || epoch.primary().equals(name)) {
            return false;
        }
        Member primary = live.get(epoch.primary());
        if (primary == null || primary.state() != Member.State.PRIMARY) {
            return false;
        }
        role.follow(primary.replicationAddress(), primary.http());
        state = Member.State.REPLICA;
        LOG.info("Following the primary {} (epoch {})", primary.name(), epoch.epoch());
        return true;
    }

    /**
     * This member leads: it records itself as the primary of the next epoch (a transaction that checks its leadership
     * and the record's version), and only then begins that epoch in its log and accepts appends.
     */
    private void claim(EpochRecord epoch) throws InterruptedException {
        long disconnectsBefore = disconnects.get();
        role.stopFollowing();
        long end = wal.insertLsn();
        // Past every number the group used (a member elected that died before anyone followed it took one) and every
        // log's own: all of them begin this one epoch.
        int next = Math.max(role.newestEpoch(), epoch == null ? 0 : epoch.epoch()) + 1;
        EpochRecord written;
        try {
            written = coordinator.writeEpoch(new EpochRecord(next, name, end, null, 0, -1), epoch);
        } catch (Exception e) {
            LOG.warn("Could not record epoch {} in the coordinator: {}", next, e.toString());
            written = null;
        }
        if (written == null) {
            coordinator.leaveLatch();
            return;
        }
        try {
            Epoch begun = role.becomePrimary(next);
            if (begun.number() != next) {
                throw new IllegalStateException("the log began epoch " + begun.number() + ", not " + next);
            }
        } catch (RuntimeException e) {
            role.fence("this member could not become the primary: " + e.getMessage());
            LOG.error("Elected, but could not become the primary: {}; giving the leadership up", e.getMessage(), e);
            if (epoch != null) {
                try { // nothing was appended in the new epoch: the old record stands again
                    coordinator.writeEpoch(epoch, written);
                } catch (Exception restore) {
                    LOG.error("Could not restore the epoch record: {}", restore.toString());
                }
            }
            coordinator.leaveLatch();
            return;
        }
        ledVersion = written.version();
        epochView = written;
        state = Member.State.PRIMARY;
        elections.incrementAndGet();
        LOG.info("This member is the group's primary: epoch {} from {}", next, Lsn.format(end));
        // A suspension reported before the state was PRIMARY fenced nothing (and becomePrimary reopened what a fence
        // closed): look again now. One reported from here on sees PRIMARY and fences by itself.
        if (disconnects.get() != disconnectsBefore || !coordinator.leads()) {
            fence("this member lost its coordinator connection while becoming the primary");
        }
    }

    /** What a switchover did: the new primary's epoch record. */
    public record Switchover(EpochRecord epoch) {
    }

    /**
     * Hands the primary's role to {@code target} without losing anything ({@link Handover}); waits until it leads.
     *
     * @throws IllegalStateException (conflict) when this member is not the primary, or the target is not a caught-up
     *                               replica in time (appends then resume here, in a new epoch)
     * @throws java.util.NoSuchElementException when no member is named {@code target}
     * @throws java.util.concurrent.TimeoutException when the target did not take over in time (then this member may
     *                               lead again)
     */
    public Switchover switchover(String target) throws Exception {
        EpochRecord handedOver;
        synchronized (this) { // no step runs meanwhile: the handover owns the role until it has fenced
            if (state != Member.State.PRIMARY) {
                throw new IllegalStateException("this member is not the group's primary; the primary is "
                        + (epochView == null ? "not known" : epochView.primary()));
            }
            handedOver = new Handover(this, coordinator, role, wal, name).handOver(target);
            handoverDeadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Handover.TAKE_OVER_MILLIS);
        }
        EpochRecord now = Handover.awaitTakeOver(() -> epochView, target, handedOver);
        return new Switchover(now);
    }

    /** For {@link Handover}, under this controller's lock: back to leading, in a new epoch. */
    void resume(EpochRecord epoch) throws InterruptedException {
        claim(epoch);
    }

    private void publish() {
        long flushed = wal.flushedLsn();
        Member now = self(wal.status().history().at(flushed).number(), flushed, namedPositions());
        if (!now.equals(published) && coordinator.publish(now)) {
            published = now;
        }
    }

    /** Each named log's position as the election compares it (a log closing meanwhile, deleted, is left out). */
    private Map<String, Member.LogPosition> namedPositions() {
        Map<String, Member.LogPosition> out = new TreeMap<>();
        WalStore store = logs.openedStore();
        if (store == null) {
            return out;
        }
        for (String log : store.names()) {
            store.log(log).ifPresent(l -> {
                try {
                    long flushed = l.flushedLsn();
                    WalStatus status = l.status();
                    out.put(log, new Member.LogPosition(status.logId(), status.history().at(flushed).number(), flushed));
                } catch (WalClosedException e) {
                    // deleted or reopened meanwhile: the next tick publishes what it is
                }
            });
        }
        return out;
    }

    /**
     * This member's log {@code log} ({@code default} or a named one; null when it holds none of that name), for another
     * member copying a tail of it ({@link io.walden.server.http.HeldRecordsApi}): only while this member follows no
     * primary ({@link Member.State#LOOKING}, or {@link Member.State#FENCED}), so that its logs' ends are final. A
     * replica's end still moves and may be rewound; a primary's moves.
     *
     * @throws IllegalStateException in any other state
     */
    public Wal heldLog(String log) {
        Member.State now = state;
        if (logs == null || (now != Member.State.LOOKING && now != Member.State.FENCED)) {
            throw new IllegalStateException("this member is " + (logs == null ? "starting" : now.wireName()) + ": it serves "
                    + "its records to another member only while it follows no primary (looking or fenced); see /admin/status");
        }
        return logs.find(log);
    }

    private Member self(int epoch, long flushed, Map<String, Member.LogPosition> named) {
        return new Member(name, Member.advertised(config.httpAddress()), Member.advertised(config.replicationListen()),
                state, epoch, flushed, named);
    }

    /** The group as this member sees it, for /admin/status (field names are a contract: docs/http-api.md). */
    public Map<String, Object> status() {
        return GroupStatus.json(coordinator, name, state, epochView, membersView,
                state == Member.State.LOOKING ? electionNote : null, elections.get(), sessionLosses.get());
    }

    /** Whether this member is the group's primary now, as far as it knows (a fence may be on its way). */
    public boolean isPrimary() {
        return state == Member.State.PRIMARY;
    }

    /** Stops taking part: the tick stops, the latch and the member node go (before the log closes). */
    @Override
    public void close() {
        loop.shutdown();
        try {
            loop.awaitTermination(70, TimeUnit.SECONDS); // a step may be stopping a receiver (up to 60 s)
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (role != null) {
            // Whatever the last step did: once the session ends a successor may be elected at once.
            state = state == Member.State.PRIMARY ? Member.State.FENCED : state;
            role.fence("the server is stopping");
        }
        if (!left) {
            coordinator.close();
        }
    }
}
