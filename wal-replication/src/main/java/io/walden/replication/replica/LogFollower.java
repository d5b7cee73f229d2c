package io.walden.replication.replica;

import io.netty.channel.Channel;
import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.core.archive.ArchiveTarget;
import io.walden.core.internal.thread.LoopGroup;
import io.walden.replication.protocol.Frame;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One log of a version 6 replica (docs/replication-protocol.md, "Version 6"): its {@link ReplicaSession} (the write
 * stage, the applied position, the rewind) and its {@link LogReceiver}, which writes, flushes and reports, in order, on
 * the replica's receiver threads (shared by every log);
 * and, per connection, its {@link Stream}: the log's number there and whether its Welcome was taken. The frames of the
 * log's stream are those of version 5, each handled as {@link ReceiverHandler} handles them, but ending the stream
 * (a Restart, an Error that is not final, a failed write) starts the log again on the same connection.
 *
 * <p>Thread-safety: {@link #onFrame}, {@link #attach} and {@link #settle} from the connection's event loop or the
 * client's catalog thread; everything that touches the log runs on its receiver, one task at a time.
 */
final class LogFollower {
    private static final Logger LOG = LoggerFactory.getLogger(LogFollower.class);
    private static final long RETRY_MILLIS = 500;

    /** This log on one connection. */
    static final class Stream {
        final Channel channel;
        final int number;
        final ReplicaSession.Out out;
        /** The connection's bytes not yet written, by every log. */
        final PendingBytes connectionPending;
        /** This log's bytes received and not yet written: while some wait, its write stage puts its force off. */
        final AtomicLong pending = new AtomicLong();
        /** Its Welcome was taken (receiver only): data is applied only then. */
        boolean accepted;

        Stream(Channel channel, int number, PendingBytes connectionPending) {
            this.channel = channel;
            this.number = number;
            this.connectionPending = connectionPending;
            this.out = frame -> channel.writeAndFlush(new Frame.OnLog(number, frame));
        }
    }

    final String name;
    /** The log's id and segment size, which no reopen changes: checked against the primary's on any thread. */
    final long logId;
    final long segmentSize;
    /**
     * The log as it is open now, and its session: replaced together by the receiver when the log reopens with new
     * settings ({@link #settle}), read on any thread (the receiver's tasks read them when they run, so each frame goes
     * to the log open then).
     */
    volatile Wal wal;
    volatile ReplicaSession session;
    private final InetSocketAddress primary;
    private final String replicaName;
    private final LogReceiver receiver;
    private final ArchiveTarget archive;
    private volatile Stream current;
    /** Why the primary refused this log for good, or null. */
    volatile String fatal;
    volatile String lastError;

    /**
     * @param archive   where the log fetches what its primary no longer keeps ({@code restore-from}; each log its own
     *                  prefix), or null: the log then stays refused until rebuilt
     * @param receivers the replica's receiver threads, which this log's {@link LogReceiver} runs on
     */
    LogFollower(String name, Wal wal, InetSocketAddress primary, String replicaName, ArchiveTarget archive,
                LoopGroup receivers) {
        this.name = name;
        this.archive = archive;
        this.logId = wal.status().logId();
        this.segmentSize = wal.config().segmentSize();
        this.wal = wal;
        this.primary = primary;
        this.replicaName = replicaName;
        this.receiver = new LogReceiver(receivers, name);
        this.session = sessionOf(wal);
    }

    private ReplicaSession sessionOf(Wal log) {
        return new ReplicaSession(log, primary, replicaName, new byte[0], new ApplierDriver(log, null, 0), archive, receiver,
                () -> { }, () -> { });
    }

    /** Bytes of this log fetched from the archive since this replica started following it. */
    long archiveBytes() {
        return session.archiveBytes;
    }

    /**
     * Gives the log its primary's settings on its receiver, between two of its frames, so that the stream goes on
     * from exactly where the log ended, and nothing it holds is asked for again: {@code change} applies them and returns
     * the log open now (the same one when they changed nothing here). A successor takes the log's place here, and
     * {@code adopted} readies it (it refuses appends as every log of this replica does) before the next frame reaches it.
     * A change that failed leaves the log as {@code openNow} finds it (reopened with its old settings, if it could be).
     */
    void settle(Supplier<Wal> change, Supplier<Wal> openNow, Consumer<Wal> adopted) {
        execute(() -> {
            ReplicaSession before = session;
            if (before.dropping) {
                return; // stopping: the log is someone else's to change
            }
            long archived = 0; // what the primary said of its archive (0: nothing yet), which a reopened log forgets
            Wal now;
            try {
                archived = wal.replication().archivedFloor();
                before.writes.flushWritten(); // what was written is forced before the log closes
                now = change.get();
            } catch (RuntimeException e) {
                lastError = "could not give log " + name + " its primary's settings: " + e;
                LOG.error("Could not give log {} its primary's settings: {}", name, e.toString());
                now = openNow.get();
            }
            if (now == null || now == wal) {
                return;
            }
            ReplicaSession next = sessionOf(now);
            next.streamingChannel = before.streamingChannel;
            next.rewinds = before.rewinds;
            next.archiveBytes = before.archiveBytes;
            wal = now;
            session = next;
            adopted.accept(now);
            if (archived != 0) {
                now.replication().primaryArchived(archived);
            }
            LOG.info("Log {} reopened with its primary's settings; it goes on from {}", name, Lsn.format(now.insertLsn()));
        });
    }

    /** Whether this log's stream is taken on the current connection. */
    boolean isStreaming() {
        Stream s = current;
        return s != null && s.channel.isActive() && session.streamingChannel == s.channel;
    }

    /**
     * Follows this log as number {@code number} of {@code channel} from now on; {@link #start} it once the connection's
     * handler routes the number's frames to the stream returned (its Welcome may come back at once).
     */
    Stream attach(Channel channel, int number, PendingBytes pending) {
        Stream s = new Stream(channel, number, pending);
        current = s;
        return s;
    }

    /** Sends the log's Start on {@code s}, once what is queued is written. */
    void start(Stream s) {
        execute(() -> {
            s.accepted = false;
            if (fatal == null && current == s && s.channel.isActive()) {
                s.out.send(session.start()); // on the receiver: after what was queued, so the start is this log's end
            }
        });
    }

    /** A frame of this log's stream on {@code s}'s connection (on its event loop). */
    void onFrame(Stream s, Frame frame) {
        if (frame instanceof Frame.Welcome welcome) {
            onWelcome(s, welcome);
        } else if (frame instanceof Frame.Data data) {
            int length = data.bytes().readableBytes();
            s.connectionPending.add(length);
            s.pending.addAndGet(length);
            data.retain(); // the envelope is released on return; the receiver releases this one
            try {
                receiver.execute(() -> {
                    try {
                        if (s.accepted && !session.dropping) {
                            session.applyWithoutWaiting(s.out, data.startLsn(), data.bytes(), s.pending.get() > length);
                            session.primaryFlushed(s.out, data.flushedLsn());
                        }
                    } catch (RuntimeException | Error e) {
                        LOG.error("Could not apply replicated bytes of log {} at {}: {}; starting it again", name,
                                Lsn.format(data.startLsn()), e.toString());
                        lastError = e.toString();
                        s.accepted = false;
                        retry(s);
                    } finally {
                        data.release();
                        s.pending.addAndGet(-length);
                        s.connectionPending.add(-length);
                    }
                });
            } catch (RejectedExecutionException e) { // closing: the receiver takes nothing more
                data.release();
                s.pending.addAndGet(-length);
                s.connectionPending.add(-length);
            }
        } else if (frame instanceof Frame.Keepalive keepalive) {
            execute(() -> {
                if (s.accepted && !session.dropping) {
                    session.primaryFlushed(s.out, keepalive.flushedLsn());
                }
                if (keepalive.replyRequested()) {
                    session.status(s.out);
                }
            });
        } else if (frame instanceof Frame.Archived archived) {
            execute(() -> {
                if (s.accepted && !session.dropping) {
                    wal.replication().primaryArchived(archived.floorLsn());
                }
            });
        } else if (frame instanceof Frame.Restart) {
            start(s); // after the rewind its Welcome asked for, if any
        } else if (frame instanceof Frame.Error error) {
            execute(() -> s.accepted = false);
            if (error.code() == Frame.Error.LSN_REMOVED && session.catchUp != null) {
                lastError = error.message();
                LOG.warn("The primary at {} no longer keeps the end of log {}: {}; fetching it from the archive {}",
                        session.primary, name, error.message(), archive.uri());
                execute(() -> { // on the receiver, before the start that follows it (queued after it)
                    ReplicaSession now = session;
                    now.lastError = null;
                    now.fetchFromArchive(error.message());
                    if (now.fatal != null) {
                        fatal = now.fatal;
                    } else if (now.lastError != null) {
                        lastError = now.lastError;
                    }
                });
                retry(s);
            } else if (error.isFinal()) {
                fatal = error.message();
                LOG.error("The primary at {} refused log {} for good: {}", session.primary, name, error.message());
            } else {
                lastError = error.message();
                LOG.warn("The primary at {} refused log {} for now: {}; retrying", session.primary, name, error.message());
                retry(s);
            }
        }
    }

    private void onWelcome(Stream s, Frame.Welcome welcome) {
        if (welcome.logId() != logId || welcome.segmentSize() != segmentSize) {
            fatal = "the primary's log " + name + " is " + Long.toHexString(welcome.logId()) + " (segments of "
                    + welcome.segmentSize() + " bytes), not this replica's " + Long.toHexString(logId);
            LOG.error("Refusing to follow log {}: {}", name, fatal);
            return;
        }
        execute(() -> {
            try {
                session.rewindIfNeeded(welcome.history());
                wal.replication().adoptHistory(welcome.history()); // durably, before any byte of it is applied
            } catch (RuntimeException e) {
                fatal = e.getMessage() + "; rebuild this replica's log " + name + " from the primary";
                LOG.error("Refusing to follow log {}: {}", name, fatal);
                return;
            }
            s.accepted = true;
            session.streamingChannel = s.channel;
            lastError = null;
            session.status(s.out); // where this log stands, so the primary knows at once
            session.primaryFlushed(s.out, welcome.flushedLsn());
        });
    }

    /** Starts the log again after a while, if {@code s} is still its stream. */
    private void retry(Stream s) {
        s.channel.eventLoop().schedule(() -> {
            if (current == s) {
                start(s);
            }
        }, RETRY_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Reports where this log stands on its current stream (the status interval). */
    void status() {
        Stream s = current;
        if (s != null && s.channel.isActive()) {
            execute(() -> {
                if (s.accepted) {
                    session.status(s.out);
                }
            });
        }
    }

    private void execute(Runnable task) {
        try {
            receiver.execute(task);
        } catch (RejectedExecutionException e) {
            // closing: nothing more is done for this log
        }
    }

    /** Tells the primary that this replica no longer follows this log on the current connection, if any. */
    void end() {
        Stream s = current;
        if (s != null && s.channel.isActive()) {
            s.out.send(new Frame.End());
        }
    }

    /**
     * Stops following: the receiver ends, after dropping what is queued (a later start resumes from the log's end) or,
     * for a promotion, applying it.
     *
     * @return whether it ended within the wait
     */
    boolean stop(boolean dropQueued) {
        current = null;
        session.dropping = dropQueued;
        receiver.shutdown();
        try {
            if (receiver.awaitTermination(60, TimeUnit.SECONDS)) {
                if (!dropQueued) { // a promotion: what was received is forced before the log takes appends
                    session.forceWritten();
                }
                session.applier.close();
                return true;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        LOG.error("The receiver of log {} did not stop within 60 s (a flush is stuck)", name);
        return false;
    }
}
