package io.walden.core.internal.journal;

import io.walden.core.WalException;
import io.walden.core.internal.WritePath;
import io.walden.core.internal.thread.BackgroundThreads;
import io.walden.core.internal.thread.Loop;
import io.walden.core.internal.thread.LoopRunner;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;

/**
 * The store journal's force for callers with no event loop to run it on: a replica's receivers, which start each log's
 * flush without waiting for it ({@code GroupCommit#flushDeferred}). A thread of the store's own,
 * {@code walden-journal-force}, forces the journal when asked, once the journal's gather says the commits it expects
 * are in (as {@link LoopForces}' task does on a loop): every log that submitted before the force began shares it, and
 * those that submit during it share the next. The thread starts at the first request.
 *
 * <p>Why not the journal's background writer: it runs on the store's writer threads, and a log's writer there may be
 * waiting for that log's round in flight, which only this force ends. With every writer thread so waiting, the journal
 * would never be forced. This thread waits for nothing but the journal's own flush.
 *
 * <p>Thread-safety: {@link #request} from any thread; the loop on its own thread.
 */
final class RequestedForces implements Loop {
    /** The idle with nothing asked: a request wakes it long before. */
    private static final long IDLE_NANOS = Duration.ofHours(1).toNanos();
    private static final long RETRY_NANOS = Duration.ofMillis(10).toNanos();
    private static final Logger LOG = LoggerFactory.getLogger(RequestedForces.class);

    private final WritePath journal;
    private final LoopRunner runner;
    /** Set by a request, cleared by the turn that serves it (before it looks at the journal). */
    private volatile boolean wanted;
    private volatile boolean started;

    RequestedForces(WritePath journal, BackgroundThreads threads) {
        this.journal = journal;
        this.runner = threads.runner(BackgroundThreads.Job.JOURNAL_FORCE, this);
    }

    /**
     * Forces the journal soon, on this thread: after what was submitted by now. A store of logs nobody replicates into
     * never starts the thread.
     */
    void request() {
        wanted = true;
        if (!started) {
            synchronized (this) {
                if (!started) {
                    runner.start();
                    started = true;
                }
            }
        }
        runner.wake(); // a wake-up while the loop works is kept for its next idle
    }

    @Override
    public long doWork() {
        if (!wanted) {
            return IDLE_NANOS;
        }
        wanted = false; // before the journal is read: a request after this is served by the next turn
        try {
            long again = journal.flushWhenGathered(null); // leads and forces here, or says when to look again
            if (again > 0) {
                wanted = true;
                return again;
            }
        } catch (WalException e) {
            // closed or failed: the journal's failure has failed every round that waited for it
        }
        return 0;
    }

    /**
     * Anything else that escaped a turn: the rounds that asked may still wait for this force, so the request stands
     * and the loop goes on (never {@link #STOP}: nothing else would force them), after a pause.
     */
    @Override
    public long onError(Throwable failure) {
        LOG.error("The store journal's force for a replica's receivers failed; trying again: {}", failure.toString(), failure);
        wanted = true;
        return RETRY_NANOS;
    }

    void stop() {
        runner.stop(Duration.ofSeconds(30));
    }
}
