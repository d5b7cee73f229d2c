package io.walden.replication.replica;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.walden.core.Epoch;
import io.walden.core.EpochHistory;
import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.core.archive.ArchiveTarget;
import io.walden.core.replication.WriteStage;
import io.walden.replication.protocol.Frame;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * What a replica's successive connections share: the log and who it follows, the receiver thread that writes,
 * flushes and applies in order, the log's write stage (which alone decides when received bytes are forced), the
 * applied position, the archive to fetch from, and what the status reports
 * (the current and the streaming connection, the last error, a final refusal, counters). One per
 * {@link ReplicaClient}; each connection's {@link ReceiverHandler} works on it.
 *
 * <p>Thread-safety: the methods run on the receiver thread; the fields are read from any thread.
 */
final class ReplicaSession {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaSession.class);

    final Wal wal;
    /** Receiver thread only. */
    final WriteStage writes;
    final InetSocketAddress primary;
    final String name;
    final byte[] secret;
    final ApplierDriver applier;
    /** Fetches what the primary removed; null without an archive. */
    final ArchiveCatchUp catchUp;
    final ArchiveTarget archive;
    /** Runs this log's receiving work, one task at a time, in order. */
    final Executor receiver;
    /** The connection welcomed: the reconnect backoff starts again from its shortest. */
    final Runnable welcomed;
    /** The connection closed: connect again later. */
    final Runnable disconnected;
    volatile Channel channel;
    /** The connection whose welcome was taken: streaming while it is the current, open one. */
    volatile Channel streamingChannel;
    /** Why the primary refused this replica for good, or null. */
    volatile String fatal;
    /** Why the last connection attempt or connection failed (unreachable, TLS handshake, reset), or null. */
    volatile String lastError;
    /** Set by close(): queued frames are dropped, not applied (a later connection resumes from the log's end). */
    volatile boolean dropping;
    /** Rewinds of this replica's log since it started following (written by the receiver thread only). */
    volatile long rewinds;
    volatile long archiveBytes;
    /** Receiver only: a force {@link #applyWithoutWaiting} started is in flight; what is written meanwhile waits for it. */
    private boolean forcing;
    /** Receiver only: where this log's reports went last; a force's end reports there. */
    private Out lastOut = frame -> { };

    ReplicaSession(Wal wal, InetSocketAddress primary, String name, byte[] secret, ApplierDriver applier,
                   ArchiveTarget archive, Executor receiver, Runnable welcomed, Runnable disconnected) {
        this.wal = wal;
        this.writes = wal.replication().writeStage();
        this.primary = primary;
        this.name = name;
        this.secret = secret;
        this.applier = applier;
        this.archive = archive;
        this.catchUp = archive == null ? null : new ArchiveCatchUp(wal, archive);
        this.receiver = receiver;
        this.welcomed = welcomed;
        this.disconnected = disconnected;
    }

    /** Where a session's frames to the primary go: the connection, or (version 6) its log's envelope on it. */
    interface Out {
        void send(Frame frame);
    }

    /** A frame's bytes as one buffer: its own memory, or, for a frame split over buffers, a copy. */
    private static ByteBuffer view(ByteBuf bytes) {
        return bytes.nioBufferCount() == 1 ? bytes.nioBuffer() : ByteBuffer.wrap(ByteBufUtil.getBytes(bytes));
    }

    /** Reports where this replica stands. */
    void status(Out c) {
        lastOut = c;
        if (!forcing) { // a force in flight covers what was written before it, and its end starts the next
            forceWritten(); // a batch cut short by a broken connection is forced before it is reported
        }
        report(c);
    }

    /**
     * Forces what is written and not yet flushed: before a report, and once the receiver has stopped (the write stage
     * is then the caller's: the last force started without waiting may have ended with bytes written after it, and no
     * receiver is left to start the next). A failed or closed log is reported as it is, and forces nothing more.
     */
    void forceWritten() {
        try {
            writes.flushWritten();
        } catch (RuntimeException e) {
            LOG.warn("Cannot force what the replica's log {} received: {}", wal.directory(), e.getMessage());
        }
    }

    /** Reports the written, flushed and applied positions as they are. */
    private void report(Out c) {
        long flushed = wal.flushedLsn();
        applier.advance(flushed);
        c.send(new Frame.Status(wal.writtenLsn(), flushed, applier.applied(), now(), false));
    }

    /**
     * The primary says it flushed everything below {@code lsn}: readers (and the applier) may see this log up to there.
     * Reports at once when that moved what is applied, since {@code REMOTE_APPLY} commits wait for it.
     */
    void primaryFlushed(Out c, long lsn) {
        long before = applier.applied();
        wal.replication().raiseReadLimit(lsn);
        long flushed = wal.flushedLsn();
        applier.advance(flushed);
        if (applier.applied() != before) {
            c.send(new Frame.Status(wal.writtenLsn(), flushed, applier.applied(), now(), false));
        }
    }

    /** Applies what the archive holds past this log's end; stops the replica when it holds nothing. */
    void fetchFromArchive(String refusal) {
        try {
            long fetched = catchUp.run();
            archiveBytes += fetched;
            if (fetched == 0) {
                fatal = refusal + "; the archive " + archive.uri() + " holds nothing after " + Lsn.format(wal.insertLsn())
                        + " either: rebuild this replica";
                LOG.error("{}", fatal);
            }
        } catch (IOException | RuntimeException e) {
            lastError = "fetching from the archive " + archive.uri() + " failed: " + e.getMessage();
            LOG.error("{}; retrying with the next connection", lastError);
        }
    }

    /** Wall-clock time in microseconds, as status frames carry it. */
    static long now() {
        return TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
    }

    /**
     * When the primary's history ends this log's epoch below this log's end, removes what lies beyond (the primary
     * never had it: docs/replication.md, "Shipping before the flush"), durably, before adopting that history. The
     * primary ends the stream after such a welcome; the next hello starts where the rewind left the log.
     *
     * @throws IllegalStateException when the application's applier already took records beyond that point (the
     *                               replica must be rebuilt: the application's state holds what the primary lacks)
     */
    void rewindIfNeeded(EpochHistory primaryHistory) {
        long end = wal.insertLsn();
        Epoch own = wal.status().history().at(end);
        long to = primaryHistory.find(own.number()) == null
                ? primaryHistory.rewindPointPastUnknownEpochs(wal.status().history(), end) // a lost rival's epoch
                : primaryHistory.rewindPoint(own, end);
        if (to < 0) {
            return;
        }
        applier.checkRewind(to);
        long removed = wal.replication().rewindTo(to);
        rewinds++;
        LOG.warn("Rewound this replica from {} to {} ({} bytes): the primary's history ends its epoch there",
                Lsn.format(end), Lsn.format(to), removed);
        applier.rewound(to);
    }

    /**
     * Writes one data frame's bytes through the write stage and reports them written; when the stage forced them (no
     * further frame queued, or its bounds reached), reports them flushed as well.
     *
     * @param moreQueued whether further received bytes wait for this log
     */
    void apply(Out out, long start, ByteBuf bytes, boolean moreQueued) {
        long end = writes.write(start, view(bytes));
        out.send(new Frame.Status(end, wal.flushedLsn(), applier.applied(), now(), false));
        if (writes.flushIfDue(moreQueued)) {
            status(out);
        }
    }

    /**
     * {@link #apply}, for a receiver that many logs share (version 6): the force is started and not waited for
     * ({@link WriteStage#flushIfDue(boolean, Runnable)}), so the receiver goes on with other logs' frames, and a store's
     * logs share the journal's force. Its end, run on this log's receiver, reports the flushed position and starts the
     * next force if bytes were written meanwhile; until then the bytes written wait for it.
     */
    void applyWithoutWaiting(Out out, long start, ByteBuf bytes, boolean moreQueued) {
        long end = writes.write(start, view(bytes));
        lastOut = out;
        out.send(new Frame.Status(end, wal.flushedLsn(), applier.applied(), now(), false));
        forceIfDue(moreQueued);
    }

    private void forceIfDue(boolean moreQueued) {
        if (!forcing && writes.flushIfDue(moreQueued, this::forced)) {
            forcing = true;
        }
    }

    /**
     * A force started by {@link #forceIfDue} ended (on the thread that forced): the receiver takes it from there, and
     * reports on the stream it wrote to last (a new connection's, if the old one ended meanwhile).
     */
    private void forced() {
        try {
            receiver.execute(() -> {
                forcing = false;
                if (!dropping && !wal.isClosed()) { // a log reopened or deleted meanwhile: its successor reports
                    report(lastOut);
                    forceIfDue(false); // what was written while it was in flight
                }
            });
        } catch (RejectedExecutionException e) {
            // the receiver stopped: nothing more is reported for this log (a stop forces what is written)
        }
    }

    /** The hello (version 5) or start (version 6) of this log: its id, the epoch that wrote its end, and that end. */
    Frame.Start start() {
        long end = wal.insertLsn();
        Epoch epoch = wal.status().history().at(end);
        return new Frame.Start(wal.status().logId(), epoch.number(), epoch.startLsn(), end);
    }
}
