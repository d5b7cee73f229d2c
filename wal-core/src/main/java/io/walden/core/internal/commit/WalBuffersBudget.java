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
 * written ahead), whatever its logs do.
 *
 * <p><b>Taking.</b> A log wakes when its bytes fit. When they do not, it asks awake logs to give theirs back, those
 * quiet longest first: a log whose every record is in its files and that nobody is inside ({@code IdleRing}'s trim) goes
 * dormant at once. When every awake log is busy, the waking log waits for one to fall quiet: the appends of more logs
 * than the budget holds at once take turns, as PostgreSQL's backends wait for a free WAL buffer. A log's ring never
 * exceeds the budget alone (the store refuses such a log's settings), so one log always fits.
 *
 * <p>Thread-safety: every method from any thread. The monitor guards the counts and the awake set; no log is asked to
 * give its ring back while it is held (that waits for the log's grace period).
 */
public final class WalBuffersBudget {
    private static final Logger LOG = LoggerFactory.getLogger(WalBuffersBudget.class);
    /** How long a waking log waits between rounds of asking quiet logs to give their rings back. */
    private static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** After how long a waiting log says so in the log file (once per wait). */
    private static final long WARN_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** One log's ring, as the budget sees it. */
    public interface Holder {
        /** The bytes its ring takes from the budget while awake. */
        long ringBytes();

        /** Since when (System.nanoTime) its end has not moved: the longest quiet give their ring back first. */
        long quietSince();

        /**
         * Gives the ring back now if the log is quiet (every record in its files, nobody inside): it turns dormant and
         * calls {@link #release}. False when it is busy, already dormant or closed.
         */
        boolean giveBack();

        /** Where its ring lives, for the log file. */
        String name();
    }

    private final long total;
    /** Guarded by this. */
    private long held;
    /** The holders awake now, in the order they woke. Guarded by this. */
    private final Set<Holder> awake = new LinkedHashSet<>();
    private long wakes;
    private long givenBack;
    private long waits;

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

    /** The bytes the awake logs hold now. */
    public synchronized long held() {
        return held;
    }

    /** How many logs are awake now. */
    public synchronized int awakeLogs() {
        return awake.size();
    }

    /** How many times a log woke (took its ring's bytes). */
    public synchronized long wakes() {
        return wakes;
    }

    /** How many times an awake log gave its ring back so that another could wake. */
    public synchronized long givenBack() {
        return givenBack;
    }

    /** How many wakes had to wait for a busy log to fall quiet. */
    public synchronized long waits() {
        return waits;
    }

    /**
     * Takes {@code who}'s ring bytes, asking quiet logs to give theirs back while they do not fit, and waiting while
     * every awake log is busy. Returns false, holding nothing, once {@code cancelled} (its log is closing). Not
     * interruptible (as a lock's acquisition: an append cannot give up halfway into a log); an interrupt is kept.
     */
    public boolean acquire(Holder who, BooleanSupplier cancelled) {
        long bytes = who.ringBytes();
        long startedAt = System.nanoTime();
        boolean waited = false;
        boolean warned = false;
        boolean interrupted = false;
        try {
            while (true) {
                List<Holder> quietFirst;
                synchronized (this) {
                    if (take(who, bytes)) {
                        return true;
                    }
                    quietFirst = new ArrayList<>(awake);
                }
                if (cancelled.getAsBoolean()) {
                    return false;
                }
                askQuietToGiveBack(quietFirst, who, bytes);
                synchronized (this) {
                    if (take(who, bytes)) {
                        return true;
                    }
                    if (!waited) {
                        waited = true;
                        waits++;
                    }
                    if (!warned && System.nanoTime() - startedAt > WARN_NANOS) {
                        warned = true;
                        LOG.warn("The log in {} has waited {} ms for {} bytes of WAL buffers: the store's budget of {} "
                                + "bytes is held by {} logs, each busy. Appends to more logs at once than the budget holds "
                                + "take turns: raise the store's walBuffers, or give its logs smaller walBuffers",
                                who.name(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedAt), bytes, total,
                                awake.size());
                    }
                    try {
                        TimeUnit.NANOSECONDS.timedWait(this, RETRY_NANOS);
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
        for (Quiet q : quietFirst) {
            if (fits(bytes)) {
                return;
            }
            Holder h = q.holder();
            if (h != who && h.giveBack()) {
                synchronized (this) {
                    givenBack++;
                }
            }
        }
    }

    private boolean take(Holder who, long bytes) {
        if (held + bytes > total) {
            return false;
        }
        if (awake.add(who)) {
            held += bytes;
            wakes++;
        }
        return true;
    }

    private synchronized boolean fits(long bytes) {
        return held + bytes <= total;
    }

    /** Gives {@code who}'s ring bytes back (it went dormant or closed); nothing if it held none. */
    public synchronized void release(Holder who) {
        if (awake.remove(who)) {
            held -= who.ringBytes();
            notifyAll();
        }
    }
}
