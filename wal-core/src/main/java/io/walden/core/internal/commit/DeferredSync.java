package io.walden.core.internal.commit;

import io.walden.core.internal.sync.ForceTarget;

import java.io.IOException;
import java.util.concurrent.ScheduledExecutorService;

/**
 * A log's way to make bytes durable that can be split in two: hand them over now, learn later that they are durable.
 * The store journal is one (docs/group-commit.md, "One journal force per event-loop batch"): a log's flush leader on
 * an event loop writes its records into its file and into the journal, and goes on to the next log the loop appended
 * to instead of waiting for the journal's force; the loop forces the journal once, after all of them, and that one
 * {@code fdatasync} ends every log's flush round ({@link FlushLeader#leadDeferred}).
 *
 * <p>Guarantee (the same as a {@link io.walden.core.internal.sync.SyncStrategy#force}'s): a completion given to
 * {@link #whenDurable} is told {@code complete} only once every byte {@link #submit}ted up to its ticket is durable,
 * and {@code fail} when that can never be so. It is told exactly once, on the thread that made the bytes durable.
 *
 * <p>Thread-safety: {@link #submit} by the log's flush leader only (as a force); the others from any thread.
 */
public interface DeferredSync {
    /**
     * Hands over {@code [fromOffset, toOffset)} of {@code segment} (already written into its file) without waiting for
     * its durability.
     *
     * @return the ticket to wait for: once it is durable, so is this range and every range submitted before it
     */
    long submit(ForceTarget segment, long fromOffset, long toOffset) throws IOException;

    /** Tells {@code completion} once {@code ticket} is durable (at once, on this thread, if it is already). */
    void whenDurable(Completion completion, long ticket);

    /**
     * Makes sure what was submitted is forced: on {@code loop}, after the tasks it has queued now (so that the other logs
     * its current batch appended to submit theirs first and share the force), once per batch of the loop however many
     * logs ask; or, when {@code loop} takes no more tasks or is null (a caller with no loop, such as a replica's
     * receiver), by a thread of the sync's own, which forces whatever every log submitted by then.
     */
    void forceSoon(ScheduledExecutorService loop);
}
