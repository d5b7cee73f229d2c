package io.walden.replication.primary;

import io.walden.core.EpochHistory;
import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.core.internal.thread.LoopGroup;
import io.walden.replication.protocol.Frame;
import io.walden.replication.protocol.FrameDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One log's stream to one replica (docs/replication-protocol.md): its hello (version 5's, or version 6's Start with the
 * connection's name and secret), answered as {@link HandshakeCheck} decides; then the replica's status frames, which
 * move its {@link ReplicaState}, its slot (and meters, for the root log) and release the log's commits; while a
 * {@link Sender} streams the log's data through the {@link Link}.
 *
 * <p>Thread-safety: {@link #open}, {@link #status} and {@link #close} on the connection's event loop; the sender runs on
 * the endpoint's sender threads.
 */
final class LogStream {
    /** The endpoint's logger, as before the split: log filters and alerts name it. */
    private static final Logger LOG = LoggerFactory.getLogger(ReplicationServer.class);

    /**
     * What every connection of one endpoint shares.
     *
     * @param secret  the shared secret a hello must carry, or null when none is required
     * @param meters  the root log's replica meters (per-log meters are not there yet)
     * @param senders the threads every stream's {@link Sender} loop runs on
     */
    record Settings(ReplicaMeters meters, long keepaliveNanos, boolean shipFlushedOnly, byte[] secret, int maxReplicas,
                    long handshakeTimeoutMillis, LoopGroup senders) {
    }

    private final LogEndpoint log;
    private final Wal wal;
    private final Settings settings;
    private final Link link;
    private ReplicaState state;
    private Sender sender;
    private boolean closed;

    LogStream(LogEndpoint log, Settings settings, Link link) {
        this.log = log;
        this.wal = log.wal;
        this.settings = settings;
        this.link = link;
    }

    /** Whether the replica was accepted: its statuses count. */
    boolean accepted() {
        return state != null;
    }

    /**
     * Answers the replica's hello for this log: refused (an Error that ends the stream), a Welcome that ends it (an
     * identity question, a rewind), or a Welcome and the stream.
     *
     * @param window how far the sender may run ahead of what the replica reported written
     */
    void open(Frame.Hello hello, long window) {
        if (wal.isClosed()) { // deleted (its drop follows) or the server stopping
            link.end(new Frame.Error(Frame.Error.NOT_A_PRIMARY, "log '" + log.name + "' is closed here; retry later"));
            return;
        }
        EpochHistory history = wal.status().history();
        HandshakeCheck.Answer answer = HandshakeCheck.answer(hello, new HandshakeCheck.Primary(history, wal.status().logId(),
                wal.oldestLsn(), wal.replication().shippableLsn(!settings.shipFlushedOnly()),
                wal.status().appendsRefusedReason() != null, settings.secret(), log.slots.has(hello.name()),
                log.slots.size(), log.replicas.size(), settings.maxReplicas()));
        if (answer instanceof HandshakeCheck.Refuse r) {
            LOG.warn("Refusing replica {}: {}", link.peer(), r.message());
            link.end(new Frame.Error(r.code(), r.message()));
        } else if (answer instanceof HandshakeCheck.Identify) {
            link.end(welcome(history));
        } else if (answer instanceof HandshakeCheck.Rewind rewind) {
            LOG.info("Replica '{}' of log {}: {}; it rewinds and starts again", hello.name(), log.name, rewind.why());
            link.end(welcome(history));
        } else if (log.replicas.putIfAbsent(hello.name(), new ReplicaState(hello.name(), wal.flushedLsn(), hello.startLsn())) != null) {
            String message = "a replica named '" + hello.name() + "' is already connected";
            LOG.warn("Refusing replica {}: {}", link.peer(), message);
            link.end(new Frame.Error(Frame.Error.MALFORMED, message));
        } else {
            state = log.replicas.get(hello.name());
            log.slots.connected(hello.name(), hello.startLsn()); // hold its start until it confirms more
            settings.meters().connected(log.name, state);
            link.send(welcome(history));
            sender = new Sender(settings.senders(), wal, link, hello.startLsn(), settings.keepaliveNanos(), history,
                    !settings.shipFlushedOnly(), state, window);
            sender.start();
            LOG.info("Replica '{}' connected from {} at {} (epoch {})", hello.name(), link.peer(),
                    Lsn.format(hello.startLsn()), hello.epoch());
        }
    }

    private Frame.Welcome welcome(EpochHistory history) {
        long oldest = wal.oldestLsn(); // before the flushed position: it never passes a flushed position read after it
        return new Frame.Welcome(FrameDescriptor.PROTOCOL_VERSION, wal.status().logId(), wal.config().segmentSize(),
                history.current().number(), wal.flushedLsn(), oldest, history);
    }

    /** The replica's positions on this log: its state, slot and meters move, and the log's commits are released. */
    void status(Frame.Status status) {
        if (state.report(status.writtenLsn(), status.flushedLsn(), status.appliedLsn(), System.nanoTime())) {
            LOG.info("Replica '{}' caught up on log {} at {}", state.name, log.name, Lsn.format(state.flushed));
        }
        settings.meters().reported(state);
        log.slots.confirmed(state.name, state.flushed);
        log.release(); // blocked commits are unparked from here; asynchronous ones complete on the releaser
        writable(); // the report may open the sender's window
    }

    /** The connection drained, or the window may have opened: a sender held back goes on at once. */
    void writable() {
        if (sender != null) {
            sender.writable();
        }
    }

    /**
     * Ends the stream with a Restart (unless it ended already): the log was reopened, and the replica starts it again,
     * from its own end, on the log's successor.
     */
    void restart() {
        link.end(null);
    }

    /** The stream or its connection ended: the sender stops, and the replica leaves the log's replicas. */
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (sender != null) {
            sender.stop();
        }
        if (state != null) {
            log.replicas.remove(state.name, state);
            settings.meters().disconnected(log.name, state); // per-connection meters: they do not pile up with names
            LOG.info("Replica '{}' left log {}", state.name, log.name);
        }
    }
}
