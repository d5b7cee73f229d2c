package io.walden.core.replication;

import io.walden.core.Durability;

import java.util.concurrent.Executor;

/**
 * What replication tells a log of its synchronous replicas: commits at {@link Durability#REMOTE_WRITE},
 * {@link Durability#ON} and {@link Durability#REMOTE_APPLY} wait, after their local flush, until the synchronous-replica
 * policy has confirmed their record at that level (PostgreSQL's SyncRepWaitForLSN with its three queues: write, flush,
 * apply). Got from {@link ReplicatedLog#remoteWaits()}; the waiting itself is the log's.
 *
 * <p>Replication drives it:
 * <ul>
 *   <li>{@link #activate()} when a synchronous policy is set (and a source that can confirm is attached);</li>
 *   <li>{@link #advance} each time the policy's confirmed position for a level moves;</li>
 *   <li>{@link #deactivate()} when an operator clears the policy: every waiter is released, since with no
 *       synchronous replica the remote levels mean {@code LOCAL} (PostgreSQL's rule);</li>
 *   <li>{@link #detach(String)} when the source that confirms goes away while the policy stands (replication
 *       stops, the server shuts down): every waiting and later remote commit fails with
 *       {@link io.walden.core.RemoteCommitUnconfirmedException} until {@link #activate()} is called again. A commit is
 *       never acknowledged at a level that did not hold.</li>
 * </ul>
 * With nothing attached the remote levels act as {@link Durability#LOCAL}. Positions only move forward.
 *
 * <p>Thread-safety: every method may be called from any thread.
 */
public interface SyncConfirmations {

    /** A synchronous policy is set and a source that confirms positions is attached. */
    void activate();

    /** Clears the policy (an operator's choice): every waiting commit is released (the remote levels act as LOCAL again). */
    void deactivate();

    /**
     * The source that confirms positions went away while the policy stands (replication stopped): waiting and later
     * remote-level commits fail with {@link io.walden.core.RemoteCommitUnconfirmedException}, never released as if
     * confirmed, until {@link #activate()} attaches a source again.
     *
     * @param reason what happened, for the error (e.g. "replication stopped: the server is shutting down")
     */
    void detach(String reason);

    /** Why remote confirmation cannot come now (see {@link #detach}), or null. */
    String unavailableReason();

    /**
     * The policy confirmed everything below {@code lsn} at {@code level} (in any order per level; a position never
     * moves back). Releases the waiters it satisfied.
     *
     * @throws IllegalArgumentException when {@code level} is not a remote level
     */
    void advance(Durability level, long lsn);

    /**
     * As {@link #advance(Durability, long)}, but the asynchronous commits it releases are completed on
     * {@code asyncCompletions} (their callbacks run there), while blocked committers are unparked at once on the
     * calling thread: a replication event loop releases blocking commits without a thread hand-off and without running
     * application callbacks itself.
     */
    void advance(Durability level, long lsn, Executor asyncCompletions);
}
