package io.walden.core.internal.commit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.PriorityQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Asynchronous waits for one position (the flushed position, or a replica level's confirmed position), told in LSN
 * order by whoever moves the position: no thread per waiter, no allocation per wait beyond the waiter's own node.
 *
 * <p>Producers push nodes onto a lock-free stack. One drainer at a time (the work-in-progress counter's 0 → 1
 * transition elects it) moves them into a heap ordered by LSN, which it alone touches, and tells them from its top
 * while the top's record is below the position; so waits pending together are told in LSN order, each exactly once.
 * Every call to {@link #drain} counts as a request: the drainer loops until it has served every request made while it
 * ran, each time re-reading the position and the failure, so a move that happened while another thread was draining
 * is never missed.
 *
 * <p>Callbacks run on the draining thread: keep them short.
 */
public abstract class OrderedCompletions {
    private static final Logger LOG = LoggerFactory.getLogger(OrderedCompletions.class);
    private final AtomicReference<Completion> incoming = new AtomicReference<>();
    private final PriorityQueue<Completion> pending = new PriorityQueue<>((a, b) -> Long.compare(a.lsn, b.lsn));
    private final AtomicInteger wip = new AtomicInteger();
    /** Waits added and not yet told (an estimate for batching, and lets a mover skip a drain when there are none). */
    private final AtomicInteger outstanding = new AtomicInteger();
    /** When the wait at the heap's top began, as of the last drain pass, or 0 when none waits (the drainer writes it). */
    private volatile long headSince;

    /** Queues {@code c} to be told when the position passes {@code lsn}; the caller then drains (or a mover will). */
    public final void add(Completion c, long lsn) {
        add(c, lsn, System.nanoTime());
    }

    /** {@link #add(Completion, long)}, for a wait that began at {@code since} (its append's start). */
    public final void add(Completion c, long lsn, long since) {
        c.lsn = lsn;
        c.waitingSince = since;
        outstanding.incrementAndGet();
        Completion head;
        do {
            head = incoming.get();
            c.next = head;
        } while (!incoming.compareAndSet(head, c));
    }

    public final int outstanding() {
        return outstanding.get();
    }

    /** Tells every wait whose record the position passed, in LSN order, and fails those {@link #failure} names. */
    public final void drain() {
        if (wip.getAndIncrement() != 0) {
            return; // the current drainer will see this request
        }
        int missed = 1;
        do {
            long position = position();
            for (Completion c = incoming.getAndSet(null); c != null; ) {
                Completion next = c.next;
                c.next = null;
                pending.add(c);
                c = next;
            }
            long now = System.nanoTime();
            for (Completion c; (c = pending.peek()) != null; ) {
                Throwable failed = c.lsn < position ? null : failure(c.lsn, c.waitingSince, now);
                if (c.lsn >= position && failed == null) {
                    break; // the oldest record still waits: so does every one after it
                }
                pending.poll();
                outstanding.decrementAndGet();
                tell(c, failed);
            }
            Completion head = pending.peek();
            headSince = head == null ? 0 : head.waitingSince;
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
    }

    /** When the oldest-LSN wait began (its append's start), as of the last drain; 0 when none waits. */
    public final long headSince() {
        return headSince;
    }

    /**
     * Tells one wait; a callback that throws (even an Error: a full direct memory pool) is logged and skipped: it must
     * not stop the drain, or every wait after it would hang.
     */
    private static void tell(Completion c, Throwable failed) {
        try {
            if (failed == null) {
                c.complete(c.lsn);
            } else {
                c.fail(failed);
            }
        } catch (Throwable e) {
            LOG.error("An append's completion threw (ignored; the next ones are told): {}", e.toString(), e);
        }
    }

    /** The position: records below it are passed. */
    protected abstract long position();

    /**
     * Why the oldest pending wait (its record's LSN, when it began) can never be told its record passed (it then
     * fails), or null to keep it waiting.
     */
    protected abstract Throwable failure(long oldestLsn, long oldestSince, long nowNanos);
}
