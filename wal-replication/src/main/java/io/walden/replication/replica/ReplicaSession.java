package io.walden.replication.replica;

import io.netty.channel.Channel;
import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.core.archive.ArchiveTarget;
import io.walden.core.replication.WriteStage;
import io.walden.replication.protocol.Frame;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
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
    final ExecutorService receiver;
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

    ReplicaSession(Wal wal, InetSocketAddress primary, String name, byte[] secret, ApplierDriver applier,
                   ArchiveTarget archive, ExecutorService receiver, Runnable welcomed, Runnable disconnected) {
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

    /** Reports where this replica stands. */
    void status(Channel c) {
        try {
            writes.flushWritten(); // a batch cut short by a broken connection is forced before it is reported
        } catch (RuntimeException e) { // failed or closed log: report what is flushed, and nothing more
            LOG.warn("Cannot flush the replica's log before reporting: {}", e.getMessage());
        }
        long flushed = wal.flushedLsn();
        applier.advance(flushed);
        c.writeAndFlush(new Frame.Status(wal.writtenLsn(), flushed, applier.applied(), now(), false));
    }

    /**
     * The primary says it flushed everything below {@code lsn}: readers (and the applier) may see this log up to there.
     * Reports at once when that moved what is applied, since {@code REMOTE_APPLY} commits wait for it.
     */
    void primaryFlushed(Channel c, long lsn) {
        long before = applier.applied();
        wal.replication().raiseReadLimit(lsn);
        long flushed = wal.flushedLsn();
        applier.advance(flushed);
        if (applier.applied() != before) {
            c.writeAndFlush(new Frame.Status(wal.writtenLsn(), flushed, applier.applied(), now(), false));
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
}
