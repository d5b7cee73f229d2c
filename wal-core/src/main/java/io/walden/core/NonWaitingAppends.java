package io.walden.core;

import io.walden.core.internal.WritePath;

import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Appends for a thread that must never wait, such as an event loop: {@link Wal#nonWaiting()}. Where {@link Wal}'s
 * appends wait (for the next segment at a roll, for room in WAL buffers full of records not yet written, for
 * durability), these return at once and say so, so that the caller can take the request to a thread that may wait.
 *
 * <p>The protocol, in one place: append a batch with {@link #tryAppend} (or {@link #tryAppendAsync}), which flushes
 * nothing by itself, then either {@link #flushIfIdle()} (this thread forces now unless a flush is in progress: a lone
 * request's commit costs no thread hand-off), {@link #flushWhenGathered()} (as that, but it puts the force off, without
 * blocking, until the siblings the log expects have appended too) or {@link #requestFlush()} (the background writer
 * forces; no thread waits). The batch then costs one force. Completions run on the thread that advanced the position they waited for.
 *
 * <p>Thread-safety: every method may be called from any number of threads at once, as {@link Wal}'s appends.
 * Allocation: {@link #tryAppend} allocates nothing (AllocationTest); the futures of {@link #tryAppendAsync} do.
 */
public final class NonWaitingAppends {
    private final WritePath writes;
    private final Compression defaultCompression;

    NonWaitingAppends(WritePath writes, Compression defaultCompression) {
        this.writes = writes;
        this.defaultCompression = defaultCompression;
    }

    /**
     * {@link Wal#appendAsync(int, ByteBuffer, Durability)} that never waits: returns null, with nothing appended, when
     * the record needs the next segment and the segment preparer has not made it ready yet (at a roll, while a new
     * segment is zero-filled), or room in WAL buffers full of records not yet written. Append from a thread that may
     * wait then.
     */
    public CompletableFuture<Long> tryAppendAsync(int type, ByteBuffer payload, Durability durability) {
        return tryAppendAsync(type, payload, durability, defaultCompression);
    }

    /** {@link #tryAppendAsync(int, ByteBuffer, Durability)}, stored with {@code compression} when that saves space. */
    public CompletableFuture<Long> tryAppendAsync(int type, ByteBuffer payload, Durability durability, Compression compression) {
        return writes.tryAppendAsync(type, payload, durability, compression);
    }

    /**
     * Appends without waiting and without allocating: {@code completion} is told once the record reaches
     * {@code durability} (see {@link AppendCompletion}; for {@code OFF}, and for a record some flush already covered,
     * before this returns). Returns false, with nothing appended and nothing told, when the record would have to wait
     * for the next segment or for room in the WAL buffers (as {@link #tryAppendAsync} returns null).
     *
     * @throws WalClosedException, WalFailedException, AppendsRefusedException, PayloadTooLargeException as appends do
     */
    public boolean tryAppend(int type, ByteBuffer payload, Durability durability, AppendCompletion completion) {
        return tryAppend(type, payload, durability, defaultCompression, completion);
    }

    /** {@link #tryAppend(int, ByteBuffer, Durability, AppendCompletion)}, stored with {@code compression} when that saves space. */
    public boolean tryAppend(int type, ByteBuffer payload, Durability durability, Compression compression,
                             AppendCompletion completion) {
        return writes.tryAppend(type, payload, durability, compression, completion);
    }

    /**
     * Forces now, on this thread, unless a flush is in progress, and tells the appends it covered (their completions
     * run on this thread). When another thread is flushing, asks the background writer for the flush after it instead
     * and returns at once.
     *
     * @return true when this thread flushed (or nothing needed flushing)
     */
    public boolean flushIfIdle() {
        return writes.flushIfIdle();
    }

    /**
     * {@link #flushIfIdle()} for a caller that gathers its siblings as a blocking committer's flush leader does,
     * without blocking: for an event loop among several that append (the sidecar's). Forces now, on this thread,
     * once that serves the commits the log expects: as many durable appends as recent flushes served have asked for
     * this one, or a few recent flush times have passed since the first of them did, or no more than one is expected
     * (a lone request never waits). Otherwise, or while another thread is flushing, it returns at once and says when
     * to call again. It never hands the flush to the background writer: call it again after the returned time (a
     * timer of the event loop, which goes on reading meanwhile) until it returns 0. Completions run on the thread that
     * forced.
     *
     * @return 0 when no append of {@link #tryAppend} waits for a flush any more; otherwise nanoseconds after which to
     *         call again
     * @throws WalClosedException when the log is closed (the background writer flushes what was appended)
     */
    public long flushWhenGathered() {
        return writes.flushWhenGathered(null);
    }

    /**
     * {@link #flushWhenGathered()} from the event loop {@code loop} itself, for a log of a {@link WalStore} (for any
     * other log the same as {@link #flushWhenGathered()}): the flush writes the records and hands them to the store's
     * journal without waiting for its force, and the journal is forced once on {@code loop}, after the tasks queued on
     * it now (docs/group-commit.md, "One journal force per event-loop batch"). A loop that appended to many logs in a
     * batch of reads, and calls this for each in one task each, thus makes one {@code fdatasync} for all of them.
     * Completions run on the thread that forced the journal. Call only on {@code loop}'s own thread.
     *
     * @return as {@link #flushWhenGathered()}; 0 also when this call's flush is still in flight (its end tells the
     *         appends it covers; an append made after it asks again)
     */
    public long flushWhenGathered(ScheduledExecutorService loop) {
        return writes.flushWhenGathered(Objects.requireNonNull(loop, "loop"));
    }

    /** Asks the background writer to force what is published: no thread waits. */
    public void requestFlush() {
        writes.requestFlush();
    }
}
