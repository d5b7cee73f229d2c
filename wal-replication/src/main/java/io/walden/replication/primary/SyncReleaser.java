package io.walden.replication.primary;

import io.walden.core.Durability;
import io.walden.core.internal.thread.WaldenThreads;
import io.walden.core.replication.SyncConfirmations;
import io.walden.replication.policy.SyncPolicy;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The synchronous policy and what it releases (PostgreSQL's synchronous_standby_names): after every status, the
 * position the policy confirms at each remote level, from the streaming replicas' reports, is handed to the log's
 * {@link SyncConfirmations}. Blocked commits are unparked by the caller; asynchronous ones complete on a thread of this
 * releaser's own, so that their callbacks never stall replication's event loop.
 *
 * <p>Thread-safety: every method from any thread.
 */
final class SyncReleaser {
    private final SyncConfirmations waits;
    private final ExecutorService completions = Executors.newSingleThreadExecutor(WaldenThreads.named("walden-sync-release"));
    private volatile SyncPolicy policy;

    SyncReleaser(SyncConfirmations waits) {
        this.waits = waits;
    }

    SyncPolicy policy() {
        return policy;
    }

    /** Sets (or with null clears) the policy, live; clearing releases every waiting commit (they act as LOCAL). */
    void policy(SyncPolicy newPolicy, Map<String, ReplicaState> replicas) {
        this.policy = newPolicy;
        if (newPolicy == null) {
            waits.deactivate();
        } else {
            waits.activate();
            release(replicas);
        }
    }

    /** Recomputes the policy's confirmed position per level and releases the commits below it. */
    void release(Map<String, ReplicaState> replicas) {
        SyncPolicy p = policy;
        if (p == null) {
            return;
        }
        Map<String, Long> written = new HashMap<>();
        Map<String, Long> flushed = new HashMap<>();
        Map<String, Long> applied = new HashMap<>();
        replicas.forEach((name, s) -> {
            if (s.streaming) {
                written.put(name, s.written);
                flushed.put(name, s.flushed);
                applied.put(name, s.applied);
            }
        });
        waits.advance(Durability.REMOTE_WRITE, p.confirmed(written), completions);
        waits.advance(Durability.ON, p.confirmed(flushed), completions);
        waits.advance(Durability.REMOTE_APPLY, p.confirmed(applied), completions);
    }

    /**
     * No confirmation comes any more (the endpoint closed). The policy stands: commits waiting for it fail as "durable
     * locally, not confirmed" and are never released as LOCAL, so that an operator stopping a primary to fail over has
     * acknowledged no ON record that no replica holds.
     */
    void close() {
        completions.shutdown();
        if (policy != null) {
            waits.detach("replication stopped (the replication endpoint closed)");
        }
    }
}
