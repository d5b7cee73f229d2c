package io.walden.replication.primary;

import io.netty.buffer.Unpooled;
import io.walden.core.EpochHistory;
import io.walden.core.Lsn;
import io.walden.core.LsnRemovedException;
import io.walden.core.ReplicationChunk;
import io.walden.core.Wal;
import io.walden.core.WalClosedException;
import io.walden.core.WalException;
import io.walden.core.internal.thread.Loop;
import io.walden.core.internal.thread.LoopGroup;
import io.walden.core.internal.thread.LoopRunner;
import io.walden.replication.protocol.Frame;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Streams one replica's data: log bytes from its position, in frames of whole records within a segment, waiting
 * for more when caught up and sending a keepalive (reply requested) when idle. By default the bytes leave once they
 * are in this log's files, before they are flushed, so that the replica writes and forces them while this log forces
 * (docs/replication.md, "Shipping before the flush"); every frame carries this log's flushed LSN, and when the flush
 * passes what the replica was last told, a keepalive tells it, since the replica applies nothing beyond it. With
 * {@code shipFlushedOnly}, PostgreSQL's rule: only flushed bytes leave.
 *
 * <p>Where it runs: a {@link Loop} on the endpoint's sender threads ({@code walden-senders-N}, shared by every stream
 * of every log and replica), not on the connection's event loop: reading the log may block (a cold page faulted in
 * from disk), and the event loop must not. Each turn ships what is shippable now and returns how long the stream may
 * idle; the log wakes it when its written or flushed position moves ({@link io.walden.core.replication.ReplicatedLog#wakeOnPositions}),
 * {@link #writable()} when the channel drains or the replica's report opens the window, and the idle ends at the
 * keepalive's deadline.
 *
 * <p>Thread-safety: {@link #start}, {@link #writable} and {@link #stop} from any thread; the fields without
 * {@code final} are the loop's, touched on its turns only (each turn happens-after the one before).
 */
final class Sender implements Loop {
    private static final Logger LOG = LoggerFactory.getLogger(Sender.class);
    private static final int MAX_CHUNK = 256 << 10;
    private static final long WRITABLE_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** How often the archive's progress is looked at (the archiver itself moves on every 100 ms at most). */
    private static final long ARCHIVE_LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final Wal wal;
    private final Link channel;
    private final long keepaliveNanos;
    private final LoopRunner runner;
    /** The runner's wake-up, registered with the log while the stream runs (one reference: unregistered by it). */
    private final Runnable wakeUp;
    private final ReplicaState state;
    /** How far this stream may run ahead of what the replica reported written (version 6 flow control). */
    private final long window;
    /** Where the stream started: what the replica had written before it reported anything. */
    private final long start;
    /** The history told to the replica in the Welcome: if the log's changes, the replica must learn the new one. */
    private final EpochHistory history;
    private long position;
    /** When the last frame left (nanoTime): a keepalive asking for a reply follows half the interval after it. */
    private long lastSent;
    /** The last frame filled the channel or the window: nothing more is read until {@link #writable()} says it drained. */
    private boolean heldBack;
    /** Ship bytes once written (false: only once flushed, PostgreSQL's rule). */
    private final boolean unflushed;
    /** The flushed LSN the replica was last told. */
    private long toldFlushed = -1;
    /** The archive floor the replica was last told (-1: not yet), and when this sender last looked at it. */
    private long toldArchived = -1;
    private long archiveLookedAt;

    /**
     * @param unflushed ship bytes once they are written here, before they are flushed
     * @param state     the replica's state, told (end LSN, nanoTime) of every chunk sent, for the lag figures and the
     *                  clamp of its reports, and read for the window
     * @param window    the most bytes sent beyond what the replica reported written ({@code Long.MAX_VALUE}: no window,
     *                  version 5, whose connection carries one log)
     */
    Sender(LoopGroup group, Wal wal, Link channel, long start, long keepaliveNanos, EpochHistory history,
           boolean unflushed, ReplicaState state, long window) {
        this.unflushed = unflushed;
        this.state = state;
        this.window = window;
        this.start = start;
        this.history = history;
        this.wal = wal;
        this.channel = channel;
        this.position = start;
        this.keepaliveNanos = keepaliveNanos;
        this.runner = group.runner("walden-sender to " + channel.peer(), this);
        this.wakeUp = runner::wake;
    }

    /** A promotion or an adopted history (cascading): the replica must reconnect and check the new one. */
    private boolean historyChanged() {
        if (wal.status().history() == history) {
            return false;
        }
        LOG.info("The log's epoch history is now {}; ending the stream to {} so that it learns it", wal.status().history(),
                channel.peer());
        channel.end(null);
        return true;
    }

    /**
     * Tells the replica how far the archive holds the log when that moved (first after the Welcome, before any data),
     * looking at most every {@link #ARCHIVE_LOOK_NANOS}: the replica keeps every segment the archive lacks
     * (docs/replication.md, "Retention and the archive"), and a late report only makes it keep more, for a while.
     */
    private void tellArchived() {
        long now = System.nanoTime();
        if (toldArchived >= 0 && now - archiveLookedAt < ARCHIVE_LOOK_NANOS) {
            return;
        }
        archiveLookedAt = now;
        long floor = wal.replication().archivedFloor();
        if (floor != toldArchived) {
            channel.send(new Frame.Archived(floor));
            toldArchived = floor;
        }
    }

    /** The window is full: the replica has not reported written what this stream sent beyond it. */
    private boolean windowFull() {
        return window != Long.MAX_VALUE && position - Math.max(start, state.written) >= window;
    }

    /** Registers the loop's wake-up with the log's positions, then gives it its first turn. */
    void start() {
        lastSent = System.nanoTime();
        wal.replication().wakeOnPositions(wakeUp); // before the first turn reads them: no move after that read is missed
        runner.start();
    }

    /**
     * The channel drained below its low water mark (on its event loop), or the replica reported a position (which may
     * open the window): a send held back goes on.
     */
    void writable() {
        runner.wake();
    }

    /** Ends the stream's loop after its current turn, without waiting for it (called on the connection's event loop). */
    void stop() {
        runner.stop(Duration.ZERO);
        wal.replication().stopWakingOnPositions(wakeUp);
    }

    /**
     * One turn: ships what is shippable now, or says how long it may idle; ends the loop when the stream ends. A turn
     * that sent a frame looks once more before it ends: the look after a frame usually finds nothing and idles, and as a
     * turn of its own it cost the group's lock and queue twice per frame (the senders took twice a thread per stream's
     * CPU). A second frame ends the turn, so a stream with a backlog still yields to the others after two chunks.
     */
    @Override
    public long doWork() {
        try {
            long idle = ship();
            return idle == 0 ? ship() : idle;
        } catch (WalClosedException e) {
            channel.end(null);
        } catch (WalException e) {
            failOn(e);
        } catch (Throwable e) {
            // Never a silent stall: a stream whose sender died would look connected and send nothing. The replica
            // reconnects and resumes from its end.
            LOG.error("The stream to {} failed; closing it", channel.peer(), e);
            channel.end(null);
        }
        return ended();
    }

    /**
     * Sends one frame if there is one to send (a chunk of records, or the news that this log's flush moved), else a
     * keepalive once the stream was idle half the keepalive interval.
     *
     * @return 0 to turn again at once (more may be shippable: after the other streams due now), the idle until the
     *         channel drains or the window opens, or the idle until the next keepalive; {@link #STOP} once it ended
     */
    private long ship() {
        if (!channel.isOpen()) {
            return ended();
        }
        if (heldBack) {
            if (!channel.isWritable() || windowFull()) {
                // The replica reads slowly (or, version 6, has this log's window of bytes unwritten): do not buffer
                // without bound, and let the connection's other logs have their turn. writable() wakes this at once; the
                // idle only bounds a wait whose wake-up raced with a close.
                return WRITABLE_CHECK_NANOS;
            }
            heldBack = false;
        }
        if (historyChanged()) {
            return ended();
        }
        tellArchived();
        ReplicationChunk chunk = unflushed ? wal.replication().readWritten(position, MAX_CHUNK) : wal.replication().readFlushed(position, MAX_CHUNK);
        // Checked again after the read: the history is replaced before any byte of a new epoch is written,
        // so bytes read while the told history is still current belong to it.
        if (historyChanged()) {
            return ended();
        }
        if (chunk != null) {
            long now = TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
            position = chunk.nextLsn(); // past the next segment's header after a closing record
            // Before the write: the replica's status about these bytes may arrive before writeAndFlush returns,
            // and reports beyond what was sent are clamped.
            state.sent(position, System.nanoTime());
            long flushed = wal.flushedLsn();
            channel.send(new Frame.Data(chunk.startLsn(), flushed, now, Unpooled.wrappedBuffer(chunk.bytes())));
            toldFlushed = flushed;
            lastSent = System.nanoTime();
            heldBack = !channel.isWritable() || windowFull();
            return heldBack ? WRITABLE_CHECK_NANOS : 0;
        }
        long flushed = wal.flushedLsn();
        if (unflushed && flushed > toldFlushed) {
            // The replica holds bytes it may not apply until it learns they are flushed here.
            channel.send(new Frame.Keepalive(flushed, TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis()), false));
            toldFlushed = flushed;
            lastSent = System.nanoTime();
            return 0;
        }
        // Caught up: idle until a position moves (the log wakes this), or until the keepalive is due.
        long quiet = System.nanoTime() - lastSent;
        if (quiet < keepaliveNanos / 2) {
            return keepaliveNanos / 2 - quiet;
        }
        channel.send(new Frame.Keepalive(wal.flushedLsn(), TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis()), true));
        lastSent = System.nanoTime();
        return keepaliveNanos / 2;
    }

    /**
     * The log refused the read: what the replica needs was removed, its history diverged, or (shipping before the flush)
     * this log stopped being a primary.
     */
    private void failOn(WalException e) {
        long shippable = wal.replication().shippableLsn(unflushed);
        if (!(e instanceof LsnRemovedException) && position > shippable) {
            // What was shipped before its flush is no longer shippable: this log stopped being a primary (fenced or
            // stepped down, it refuses appends and ships only what it flushed). The replica did not diverge, and
            // telling it so would take it out of the elections that must now choose a successor. Retry later:
            // its next handshake, here or with the next primary, decides whether it rewinds.
            LOG.info("Ending the stream to {}: this log ships only up to {} now, behind the {} already sent",
                    channel.peer(), Lsn.format(shippable), Lsn.format(position));
            channel.end(new Frame.Error(Frame.Error.NOT_A_PRIMARY, "this log serves only up to "
                    + Lsn.format(shippable) + " now, behind the replica's " + Lsn.format(position)
                    + " (it stopped being a primary); retry later"));
            return;
        }
        LOG.warn("Stopping the stream to {}: {}", channel.peer(), e.getMessage());
        channel.end(new Frame.Error(e instanceof LsnRemovedException ? Frame.Error.LSN_REMOVED
                : Frame.Error.EPOCH_DIVERGED, e.getMessage()));
    }

    /** The stream ended: the log stops waking this loop, which ends. */
    private long ended() {
        wal.replication().stopWakingOnPositions(wakeUp);
        return STOP;
    }
}
