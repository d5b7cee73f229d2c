package io.walden.core.internal.commit;

import io.walden.core.Durability;
import io.walden.core.Lsn;
import io.walden.core.RemoteCommitTimeoutException;
import io.walden.core.RemoteCommitUnconfirmedException;
import io.walden.core.internal.thread.BackgroundThreads;
import io.walden.core.internal.thread.Loop;
import io.walden.core.internal.thread.LoopRunner;
import io.walden.core.replication.SyncConfirmations;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * The remote half of a commit's wait: commits at {@code REMOTE_WRITE}, {@code ON} and {@code REMOTE_APPLY} wait here,
 * after their local flush, until the synchronous-replica policy has confirmed their record at that level (PostgreSQL's
 * SyncRepWaitForLSN with its three queues: write, flush, apply). Replication drives it through
 * {@link SyncConfirmations} (its contract is there); the log's appends wait here through {@link CommitWaits}
 * ({@link #await}, {@link #confirm}), and a {@link DurableWait} asks here whether its level waits for replicas.
 * With nothing attached the gate is inactive and costs a remote-level commit one volatile read.
 *
 * <p>No thread waits per commit: blocking committers park on a per-level Treiber stack of reusable
 * {@link Waiter}s and are unparked by {@link #advance}; asynchronous commits wait in a per-level heap and are
 * completed, in LSN order, by the thread that calls {@link #advance}. Positions only move forward.
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public final class RemoteWaits implements SyncConfirmations {
    /** Waiting levels, in the order of {@link #index(Durability)}. */
    private static final Durability[] LEVELS = {Durability.REMOTE_WRITE, Durability.ON, Durability.REMOTE_APPLY};
    /**
     * The longest a blocked commit parks before it looks again, though {@link #advance}, {@link #detach} and
     * {@link #deactivate} unpark it (its timeout parks it no longer than what is left): only a safety net, and the age at
     * which a wait is published to the stuck-commit watch. Not 10 ms: 512 commits waiting seconds for an overloaded
     * replica then woke 51,200 times a second and took 1.6 of this machine's 2 cores (benchmarks.md, "Replicating many
     * logs"); at 100 ms they reached 2.2 times the commits.
     */
    private static final long PARK_CAP_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** A wait's start: when it begins waiting here, not when its append began (see {@link #clockFor}). */
    public static final long NOW = Long.MIN_VALUE;

    private final Position[] confirmed = {new Position(0), new Position(0), new Position(0)};
    private final Waiter.Stack[] waiters = {new Waiter.Stack(), new Waiter.Stack(), new Waiter.Stack()};
    private final Level[] async = {new Level(0), new Level(1), new Level(2)};
    /** One reusable node per thread and level, so a node is never in two levels' stacks. */
    private final ThreadLocal<Waiter[]> waitersOfThread = ThreadLocal.withInitial(() -> new Waiter[] {
            new Waiter(Thread.currentThread()), new Waiter(Thread.currentThread()), new Waiter(Thread.currentThread())});
    private final long timeoutNanos;
    /** A synchronous policy is set: remote-level commits wait for its confirmation (or fail, see below). */
    private volatile boolean active;
    /**
     * Why no confirmation can come while the policy stands (the source detached, the log is closing), or null.
     * Written before waiters are woken; read by every wait after it registered itself, so none misses it.
     */
    private volatile String unavailable;
    /** Set by {@link #fail}: {@link #activate()} no longer clears {@link #unavailable} (the log is closed). */
    private volatile boolean closed;
    /**
     * Per level: the start of the oldest blocked wait that has waited longer than one park, or 0. A waiter publishes
     * its start (keeping the minimum) and clears it when it leaves; the others publish theirs again within a park.
     */
    private final AtomicLongArray blockedSince = new AtomicLongArray(LEVELS.length);
    /** Says when commits have waited too long for the replicas (the timers' thread looks once a second). */
    private final StuckCommitWatch stuck;
    /**
     * The timers, one loop: it expires timed-out asynchronous waits from the heads of the heaps (no timer per future)
     * and watches for commits waiting too long. Made with the first policy (or at once with a timeout).
     */
    private LoopRunner sweeper;
    private final BackgroundThreads threads;

    /** @param timeoutNanos how long a commit waits for the replicas before failing, or 0 to wait forever */
    public RemoteWaits(long timeoutNanos) {
        this(timeoutNanos, BackgroundThreads.own());
        start();
    }

    /**
     * As {@link #RemoteWaits(long)}, its timers on {@code threads} (the log's, or its store's), and not started: the log
     * starts them ({@link #start()}) once it opened, so that a log that fails to open leaves no timer behind.
     */
    public RemoteWaits(long timeoutNanos, BackgroundThreads threads) {
        this.timeoutNanos = timeoutNanos;
        this.threads = threads;
        this.stuck = new StuckCommitWatch(this::oldestWaitNanos, timeoutNanos > 0);
    }

    /** Starts the timers now when there is a timeout (without one, they start with the first policy). */
    public void start() {
        if (timeoutNanos > 0) {
            startTimers();
        }
    }

    private synchronized void startTimers() {
        if (sweeper != null || closed) {
            return;
        }
        // A wait is failed at most one period late: 5 % of the timeout, between 1 ms and 25 ms; the watch looks each second.
        long period = timeoutNanos == 0 ? Long.MAX_VALUE
                : Math.max(TimeUnit.MILLISECONDS.toNanos(1), Math.min(timeoutNanos / 20, TimeUnit.MILLISECONDS.toNanos(25)));
        long watchPeriod = TimeUnit.SECONDS.toNanos(1);
        sweeper = threads.runner(BackgroundThreads.Job.TIMERS, new Loop() {
            private long lastExpire = System.nanoTime();
            private long lastLook = System.nanoTime();

            @Override
            public long doWork() {
                long now = System.nanoTime();
                if (now - lastExpire >= period) {
                    lastExpire = now;
                    expire();
                }
                if (now - lastLook >= watchPeriod) {
                    lastLook = now;
                    stuck.look();
                }
                return untilNextTurn(now, lastExpire, period, lastLook, watchPeriod);
            }

            @Override
            public long onError(Throwable failure) {
                return failure instanceof Error ? STOP : period == Long.MAX_VALUE ? watchPeriod : period;
            }
        });
        sweeper.start();
    }

    /**
     * How long the timers idle after a turn at {@code now}: until the next expiry of waits ({@code period} after the last;
     * none without a timeout, {@code period} {@link Long#MAX_VALUE}) or the stuck-commit watch's next look, whichever
     * comes first; at least 1 ns. Without a timeout the last expiry never moves, so it must not count: a deadline taken
     * from it passed a second after the start, and the timers then turned without idling (a core per log of its own,
     * or the store's timer thread, for as long as a synchronous policy was set).
     */
    static long untilNextTurn(long now, long lastExpire, long period, long lastLook, long watchPeriod) {
        long untilLook = lastLook + watchPeriod - now;
        long until = period == Long.MAX_VALUE ? untilLook : Math.min(lastExpire + period - now, untilLook);
        return Math.max(1, until);
    }

    /**
     * The log is closing: every waiting and later remote-level commit under a policy fails with
     * {@link RemoteCommitUnconfirmedException} (its record is durable locally; the replicas' confirmation will not
     * come any more). Permanent.
     */
    public void fail(String reason) {
        LoopRunner timers;
        synchronized (this) {
            closed = true;
            timers = sweeper;
        }
        if (timers != null) {
            timers.stop(Duration.ofSeconds(5)); // outside the monitor: a turn of the timers may be waiting for it
        }
        detach(reason);
    }

    /**
     * How long the oldest remote-level commit still waiting has waited since its append (at most a park's length
     * early for a blocked one), or 0 when none waits: a policy whose replicas are gone shows here long before any
     * timeout (and with no timeout, forever).
     */
    public long oldestWaitNanos() {
        long now = System.nanoTime();
        long oldest = 0;
        for (int i = 0; i < LEVELS.length; i++) {
            long a = async[i].headSince();
            long b = blockedSince.get(i);
            if (a != 0) {
                oldest = Math.max(oldest, now - a);
            }
            if (b != 0) {
                oldest = Math.max(oldest, now - b);
            }
        }
        return oldest;
    }

    /** While commits at remote levels have waited too long for the replicas: the warning logged then; else null. */
    public String stuckWarning() {
        return stuck.warning();
    }

    private void expire() {
        for (Level level : async) {
            level.drain();
        }
    }

    private static int index(Durability level) {
        switch (level) {
            case REMOTE_WRITE: return 0;
            case ON: return 1;
            case REMOTE_APPLY: return 2;
            default: return -1;
        }
    }

    /** True while a synchronous policy is set: remote-level commits wait for it. */
    public boolean isActive() {
        return active;
    }

    @Override
    public void activate() {
        if (!closed) {
            unavailable = null;
        }
        active = true;
        startTimers();
    }

    @Override
    public void deactivate() {
        active = false;
        wakeAllLevels();
    }

    @Override
    public void detach(String reason) {
        unavailable = reason == null ? "replication stopped" : reason;
        wakeAllLevels();
    }

    @Override
    public String unavailableReason() {
        return active ? unavailable : null;
    }

    private void wakeAllLevels() {
        for (int i = 0; i < LEVELS.length; i++) {
            wakeAll(i);
            async[i].drain();
        }
    }

    /** The position the policy has confirmed for {@code level}: records below it are confirmed. */
    public long confirmed(Durability level) {
        int i = index(level);
        return i < 0 ? Long.MAX_VALUE : confirmed[i].get();
    }

    @Override
    public void advance(Durability level, long lsn) {
        advance(level, lsn, Runnable::run);
    }

    @Override
    public void advance(Durability level, long lsn, Executor asyncCompletions) {
        int i = index(level);
        if (i < 0) {
            throw new IllegalArgumentException(level + " is not a remote level");
        }
        if (confirmed[i].advanceTo(lsn) == lsn) {
            wake(i);
            if (async[i].outstanding() > 0) {
                Level l = async[i];
                asyncCompletions.execute(l::drain);
            }
        }
    }

    /**
     * When an append at {@code level} that may wait here begins: the timeout counts from the append, its local flush
     * included, as the application sees it. {@link #NOW} when no timeout applies (no clock read on the hot path then).
     */
    public long clockFor(Durability level) {
        return timeoutNanos > 0 && active && level.waitsForReplicas() ? System.nanoTime() : NOW;
    }

    /** {@link #await(Durability, long, long)}, its timeout counted from now. */
    public void await(Durability level, long lsn) {
        await(level, lsn, NOW);
    }

    /**
     * Blocks until the record at {@code lsn} (already flushed locally) is confirmed at {@code level}, or the
     * policy is cleared.
     *
     * @param since when the append began ({@link #clockFor}), or {@link #NOW}: the timeout counts from it
     *
     * @throws RemoteCommitTimeoutException     when the timeout passes first: the record is durable locally but
     *                                          not confirmed by the synchronous replicas
     * @throws RemoteCommitUnconfirmedException when the source detached (replication stopped, the log is closing)
     *                                          or the thread was interrupted: durable locally, not confirmed
     */
    public void await(Durability level, long lsn, long since) {
        int i = index(level);
        if (i < 0 || !active || confirmed[i].get() > lsn) {
            return;
        }
        Waiter w = waitersOfThread.get()[i];
        w.target = lsn;
        w.waiting = true;
        long start = since == NOW ? System.nanoTime() : since;
        long deadline = timeoutNanos > 0 ? start + timeoutNanos : Long.MAX_VALUE;
        boolean published = false;
        try {
            while (active && confirmed[i].get() <= lsn) {
                String reason = unavailable;
                if (reason != null) {
                    throw unconfirmed(level, lsn, reason);
                }
                if (!w.inStack) {
                    w.inStack = true;
                    waiters[i].push(w);
                    continue; // re-checked after becoming visible to advance() and detach(): no lost wake-up
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw timeout(level, lsn);
                }
                if (Thread.interrupted()) {
                    Thread.currentThread().interrupt(); // keep the flag for the caller
                    throw unconfirmed(level, lsn, "interrupted while waiting for the synchronous replicas");
                }
                if (!published ? System.nanoTime() - start > PARK_CAP_NANOS : blockedSince.get(i) == 0) {
                    publishBlocked(i, start); // a wait that outlasts a park is watched (oldestWaitNanos)
                    published = true;
                }
                LockSupport.parkNanos(this, Math.min(left, PARK_CAP_NANOS));
            }
        } finally {
            w.waiting = false;
            if (published) {
                blockedSince.compareAndSet(i, start, 0); // an older one still waiting publishes itself again
            }
        }
    }

    /**
     * Tells {@code completion} once the record at {@code lsn} (flushed locally) is confirmed at the remote
     * {@code level} (at once if it is, or if no policy is set), or fails it as {@link #await} would fail, the timeout
     * counted from {@code since} ({@link #clockFor}, or {@link #NOW}). Allocates nothing; the completion may be told on
     * this thread.
     */
    public void confirm(Durability level, long lsn, Completion completion, long since) {
        int i = index(level);
        if (i < 0) {
            throw new IllegalArgumentException(level + " is not a remote level");
        }
        // Always through the level's heap, so that waits are told in LSN order even while a drain runs.
        async[i].add(completion, lsn, since == NOW ? System.nanoTime() : since);
        async[i].drain(); // after the add: an advance or a deactivate that ran before it did not see this wait
    }

    /** Publishes a blocked wait's start, keeping the oldest. */
    private void publishBlocked(int i, long start) {
        for (long current; (current = blockedSince.get(i)) == 0 || current - start > 0; ) {
            if (blockedSince.compareAndSet(i, current, start)) {
                return;
            }
        }
    }

    private static RemoteCommitUnconfirmedException unconfirmed(Durability level, long lsn, String reason) {
        return new RemoteCommitUnconfirmedException("record " + Lsn.format(lsn) + " is durable locally but was not "
                + "confirmed at " + level.configName() + " by the synchronous replicas: " + reason, lsn);
    }

    private RemoteCommitTimeoutException timeout(Durability level, long lsn) {
        return new RemoteCommitTimeoutException("record " + Lsn.format(lsn) + " is durable locally but was not "
                + "confirmed at " + level.configName() + " by the synchronous replicas within "
                + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms of its append", lsn);
    }

    private void wakeAll(int i) {
        waiters[i].wakeAll();
    }

    /** The level's waiters: satisfied (or released) ones are unparked, the others pushed back. */
    private void wake(int i) {
        waiters[i].wake(confirmed[i].get(), !active, false);
    }

    /**
     * One level's asynchronous waits: told once the level's confirmed position passes them, released as if confirmed
     * when the policy is cleared (the level means LOCAL then), failed when the source detached or their wait timed out.
     */
    private final class Level extends OrderedCompletions {
        private final int index;

        Level(int index) {
            this.index = index;
        }

        @Override
        protected long position() {
            return active ? confirmed[index].get() : Long.MAX_VALUE;
        }

        @Override
        protected Throwable failure(long oldestLsn, long oldestSince, long nowNanos) {
            String reason = unavailable;
            if (reason != null) {
                return unconfirmed(LEVELS[index], oldestLsn, reason);
            }
            if (timeoutNanos > 0 && nowNanos - oldestSince >= timeoutNanos) {
                // The head is the oldest wait: its append began first (starts are in LSN order, but for appends that
                // began within one wait for room in the buffers, whose timeouts may then come that much later).
                return timeout(LEVELS[index], oldestLsn);
            }
            return null;
        }
    }
}
