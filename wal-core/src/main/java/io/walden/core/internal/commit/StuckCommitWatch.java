package io.walden.core.internal.commit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Says when commits at remote durability levels have waited too long for the synchronous replicas (a policy whose
 * replicas are gone, with no timeout, holds them forever and silently): a warning once the oldest has waited
 * {@link #STUCK_AFTER_NANOS}, kept for the status until two looks in a row find none that old (a blocked waiter that
 * leaves clears its start for up to a park before the next one publishes its own), then a line that they are
 * confirmed again.
 *
 * <p>Thread-safety: {@link #look()} from one thread (the remote waits' timer); {@link #warning()} from any.
 */
public final class StuckCommitWatch {
    private static final Logger LOG = LoggerFactory.getLogger(StuckCommitWatch.class);
    /** How long the oldest commit waits before the warning. */
    public static final long STUCK_AFTER_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final LongSupplier oldestWaitNanos;
    private final boolean timedOut;
    /** What was logged while commits wait too long, or null. */
    private volatile String warning;
    private int calmLooks;

    /**
     * @param oldestWaitNanos how long the oldest waiting commit has waited (0: none waits)
     * @param timedOut        whether the commits time out ({@code remote-commit-timeout} set), for the warning's words
     */
    public StuckCommitWatch(LongSupplier oldestWaitNanos, boolean timedOut) {
        this.oldestWaitNanos = oldestWaitNanos;
        this.timedOut = timedOut;
    }

    /** While commits have waited too long: the warning that was logged; else null. */
    public String warning() {
        return warning;
    }

    /** One look, about once a second. */
    public void look() {
        long oldest = oldestWaitNanos.getAsLong();
        if (warning == null && oldest >= STUCK_AFTER_NANOS) {
            warning = "commits at remote durability levels have waited " + TimeUnit.NANOSECONDS.toSeconds(oldest)
                    + " s or more for the synchronous replicas to confirm them" + (timedOut ? ""
                    : " (remote-commit-timeout 0: they wait until confirmed)") + "; the replicas the policy names may be "
                    + "gone: see the replication status";
            LOG.warn("{}", warning);
        } else if (warning != null && oldest < STUCK_AFTER_NANOS) {
            if (++calmLooks >= 2) {
                warning = null;
                calmLooks = 0;
                LOG.info("Commits at remote durability levels are confirmed again");
            }
            return;
        }
        calmLooks = 0;
    }
}
