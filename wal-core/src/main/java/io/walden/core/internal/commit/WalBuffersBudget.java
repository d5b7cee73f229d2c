package io.walden.core.internal.commit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A store's WAL buffers, from one budget (issue #36: "{@code walBuffers} is the store's total; a log takes what its
 * appends need and gives it back"). A log of the store is <em>awake</em> while it holds its ring's bytes of the budget
 * and <em>dormant</em> while it holds none: its ring's pages went back to the operating system ({@link WalBuffers#releasePages})
 * and the next thread that enters it to append first takes the bytes again ({@link Activity#sleep}). So the memory of
 * the rings of a store is at most the budget, plus the page or two a dormant ring keeps (the next record's header words
 * written ahead), but for the overdrafts below.
 *
 * <p><b>Taking.</b> A log wakes when its bytes fit. When they do not, it asks awake logs to give theirs back, those
 * quiet longest first: a log whose every record is forced, that waits for no commit and that nobody is inside
 * ({@code IdleRing}'s trim) goes dormant at once. When every awake log is busy, the waking log waits for one to fall
 * quiet: the appends of more logs than the budget holds at once take turns, as PostgreSQL's backends wait for a free
 * WAL buffer. A log's ring never exceeds the budget alone (the store refuses such a log's settings).
 *
 * <p><b>Overdrafts.</b> Waiting must never become a deadlock, and two waits could: a thread inside a log that holds the
 * budget (a claim in progress, a commit callback run by that log's flush) waking another log would wait for a log that
 * waits for it; and a wait can hold up what the budget's holders need to fall quiet (a shared writer thread, a lock).
 * So a waking thread that is inside an awake log takes its bytes at once, beyond the budget, and any wake takes them
 * after {@link #OVERDRAFT_AFTER_NANOS} of waiting. Each overdraft is counted and logged; the bytes go back as ever, when
 * the log goes dormant. The budget is a hard cap but for those.
 *
 * <p>Thread-safety: every method from any thread. The monitor guards the counts and the awake set; no log is asked to
 * give its ring back while it is held (that waits for the log's grace period), and nothing is logged under it.
 */
public final class WalBuffersBudget {
    private static final Logger LOG = LoggerFactory.getLogger(WalBuffersBudget.class);
    /** How long a waking log waits between rounds of asking quiet logs to give their rings back. */
    private static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** After how long a waiting log says so in the log file (once per wait). */
    private static final long WARN_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** After how long a waiting log takes its bytes beyond the budget (see the class: no wait becomes a deadlock). */
    static final long OVERDRAFT_AFTER_NANOS = TimeUnit.SECONDS.toNanos(2);
    /** A log that woke this recently is not asked to give back: its waking thread has yet to enter it. */
    private static final long JUST_WOKE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    /** One log's ring, as the budget sees it. */
    public interface Holder {
        /** The bytes its ring takes from the budget while awake. */
        long ringBytes();

        /** Since when (System.nanoTime) its end has not moved, or it woke: the longest quiet give their ring back first. */
        long quietSince();

        /**
         * Gives the ring back now if the log is quiet (every record forced, no commit waiting, nobody inside): it calls
         * {@link #release} and turns dormant. False when it is busy, already dormant or closed.
         */
        boolean giveBack();

        /** Whether {@code thread} is inside the log now. */
        boolean hasInside(Thread thread);

        /** Where its ring lives, for the log file. */
        String name();
    }

    private final long total;
    /** Guarded by this. */
    private long held;
    /** The holders awake now, in the order they woke. Guarded by this. */
    private final Set<Holder> awake = new LinkedHashSet<>();
    private long givenBack;
    private long waits;
    private long overdrafts;

    public WalBuffersBudget(long total) {
        if (total <= 0) {
            throw new IllegalArgumentException("a budget of WAL buffers must be positive, got " + total);
        }
        this.total = total;
    }

    /** The budget's size in bytes. */
    public long total() {
        return total;
    }

    /** The bytes the awake logs hold now (above {@link #total} only by overdrafts). */
    public synchronized long held() {
        return held;
    }

    /** How many times an awake log gave its ring back so that another could wake. */
    public synchronized long givenBack() {
        return givenBack;
    }

    /** How many wakes had to wait for a busy log to fall quiet. */
    public synchronized long waits() {
        return waits;
    }

    /** How many wakes took their bytes beyond the budget (see the class). */
    public synchronized long overdrafts() {
        return overdrafts;
    }

    /** Takes {@code who}'s ring bytes if they fit now; asks nobody, waits for nothing (an append that must not wait). */
    public synchronized boolean tryAcquire(Holder who) {
        return take(who, who.ringBytes(), false);
    }

    /**
     * Takes {@code who}'s ring bytes, asking quiet logs to give theirs back while they do not fit, and waiting while
     * every awake log is busy (but see the class's overdrafts). Returns false, holding nothing, once {@code cancelled}
     * (its log is closing, or refuses appends). Not interruptible (as a lock's acquisition: an append cannot give up
     * halfway into a log); an interrupt is kept.
     */
    public boolean acquire(Holder who, BooleanSupplier cancelled) {
        long bytes = who.ringBytes();
        long startedAt = System.nanoTime();
        boolean waited = false;
        boolean warned = false;
        boolean interrupted = false;
        Thread self = Thread.currentThread();
        try {
            while (true) {
                List<Holder> awakeNow;
                synchronized (this) {
                    if (take(who, bytes, false)) {
                        return true;
                    }
                    awakeNow = new ArrayList<>(awake);
                }
                if (cancelled.getAsBoolean()) {
                    return false;
                }
                askQuietToGiveBack(awakeNow, who, bytes);
                String overdraft = null;
                if (awakeNow.stream().anyMatch(h -> h.hasInside(self))) {
                    overdraft = "its waking thread is inside a log that holds the budget, which could not give it back "
                            + "while that thread waits";
                } else if (System.nanoTime() - startedAt > OVERDRAFT_AFTER_NANOS) {
                    overdraft = "it waited " + TimeUnit.NANOSECONDS.toMillis(OVERDRAFT_AFTER_NANOS) + " ms (what the "
                            + "logs holding the budget need to fall quiet may be held up by this wait)";
                }
                boolean took;
                boolean overdrawn = false;
                synchronized (this) {
                    took = take(who, bytes, false) || (overdrawn = overdraft != null && take(who, bytes, true));
                    if (overdrawn) {
                        overdrafts++;
                    }
                    if (!took && !waited) {
                        waited = true;
                        waits++;
                    }
                }
                if (overdrawn) {
                    LOG.warn("The log in {} took {} bytes of WAL buffers beyond the store's budget of {} bytes: {}. They "
                            + "go back when it is idle; raise the store's walBuffers or give its logs smaller walBuffers "
                            + "if this recurs", who.name(), bytes, total, overdraft);
                }
                if (took) {
                    return true;
                }
                if (!warned && System.nanoTime() - startedAt > WARN_NANOS) {
                    warned = true;
                    LOG.warn("The log in {} has waited {} ms for {} bytes of WAL buffers: the store's budget of {} bytes "
                            + "is held by {} logs, each busy. Appends to more logs at once than the budget holds take "
                            + "turns: raise the store's walBuffers, or give its logs smaller walBuffers", who.name(),
                            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedAt), bytes, total, awakeNow.size());
                }
                synchronized (this) {
                    try {
                        TimeUnit.NANOSECONDS.timedWait(this, RETRY_NANOS); // or until a ring goes back
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Asks awake logs, quiet longest first, to give their rings back until {@code bytes} fit. Outside the monitor. */
    private void askQuietToGiveBack(List<Holder> awakeNow, Holder who, long bytes) {
        record Quiet(Holder holder, long since) {
        }
        List<Quiet> quietFirst = new ArrayList<>(awakeNow.size());
        for (Holder h : awakeNow) {
            quietFirst.add(new Quiet(h, h.quietSince())); // read once: a sort must see each one value
        }
        quietFirst.sort(Comparator.comparingLong(Quiet::since));
        long now = System.nanoTime();
        for (Quiet q : quietFirst) {
            if (fits(bytes)) {
                return;
            }
            Holder h = q.holder();
            if (h != who && now - q.since() >= JUST_WOKE_NANOS && h.giveBack()) {
                synchronized (this) {
                    givenBack++;
                }
            }
        }
    }

    /** Guarded by this. */
    private boolean take(Holder who, long bytes, boolean beyondBudget) {
        if (awake.contains(who)) {
            throw new IllegalStateException("WAL buffers of " + who.name() + " taken twice (a bug: please report it)");
        }
        if (!beyondBudget && held + bytes > total) {
            return false;
        }
        awake.add(who);
        held += bytes;
        return true;
    }

    private synchronized boolean fits(long bytes) {
        return held + bytes <= total;
    }

    /** Gives {@code who}'s ring bytes back (it goes dormant, or closes); nothing if it held none. */
    public synchronized void release(Holder who) {
        if (awake.remove(who)) {
            held -= who.ringBytes();
            notifyAll();
        }
    }
}
