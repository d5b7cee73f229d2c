package io.walden.replication.replica;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateHandler;
import io.walden.core.Epoch;
import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.core.archive.ArchiveTarget;
import io.walden.core.internal.thread.WaldenThreads;
import io.walden.replication.protocol.FrameDecoder;
import io.walden.replication.protocol.FrameDescriptor;
import io.walden.replication.protocol.FrameEncoder;
import io.walden.replication.protocol.ProtocolErrorHandler;
import io.walden.replication.transport.EventLoops;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A replica's receiver (docs/replication-protocol.md): connects to the primary, sends its epoch and end, adopts
 * the primary's epoch history, applies what arrives byte for byte (through the log's {@link io.walden.core.replication.WriteStage}), flushes it
 * through its own group commit, hands each flushed record to the application's {@link RecordApplier} if one is
 * registered, and reports written, flushed and applied positions after each batch, at a status interval and
 * whenever asked. Reconnects with backoff and resumes exactly at its end. While it runs, local appends are refused
 * with an error that names the primary; {@link #promote()} ends that.
 *
 * <p>Threads: a Netty event loop for the connection ({@link Builder#eventLoops}: by default a NIO group of one thread
 * of its own), one receiver thread ({@code walden-receiver}) that writes, flushes and applies, in order.
 * Thread-safety: {@link #close()} and {@link #promote()} from any thread but that event loop.
 */
public final class ReplicaClient implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaClient.class);

    private final Wal wal;
    private final InetSocketAddress primary;
    private final SslContext tls;
    /** The applied position and the application's applier; the receiver thread's (closed after it stops). */
    private final ApplierDriver applier;
    /** What the connections share; the receiver thread works on it. */
    private final ReplicaSession session;
    private final long statusIntervalMillis;
    private final EventLoops loops;
    /** The connections to the primary, made again after each ends. */
    private final Reconnecting connections;
    private volatile Thread receiverThread;
    private final ExecutorService receiver = Executors.newSingleThreadExecutor(r -> {
        Thread t = WaldenThreads.daemon(r, "walden-receiver");
        receiverThread = t;
        return t;
    });
    private final FrameEncoder encoder = new FrameEncoder();
    private final Object lifecycle = new Object();
    private volatile boolean running = true;
    private volatile boolean promoted;
    private ScheduledFuture<?> statusTask;

    private ReplicaClient(Builder b) {
        this.wal = b.wal;
        this.primary = b.primary;
        this.tls = b.tls;
        this.statusIntervalMillis = b.statusIntervalMillis;
        this.loops = b.loops == null ? EventLoops.ownNio() : b.loops;
        this.applier = new ApplierDriver(wal, b.applier, b.applyFrom);
        this.session = new ReplicaSession(wal, primary, b.name, b.secret == null ? new byte[0] : b.secret, applier,
                b.archive, receiver, this::reached, this::retryLater);
        this.connections = new Reconnecting(loops, primary, tls, () -> {
            FrameDecoder decoder = new FrameDecoder(FrameDescriptor.HANDSHAKE_MAX_FRAME_LENGTH); // raised once welcomed
            return new ChannelHandler[] {new IdleStateHandler(ReceiverHandler.IDLE_SECONDS, 0, 0),
                    decoder, encoder, new ReceiverHandler(session, decoder), new ProtocolErrorHandler()};
        }, message -> session.lastError = message, () -> session.fatal == null);
        wal.replication().refuseAppends(b.primaryHttp != null
                ? "this log is a replica of the primary at " + b.primaryHttp + " (its HTTP address): write there"
                : "this log is a replica of the primary at " + primary.getHostString() + ":" + primary.getPort()
                        + " (its replication address; this replica does not know its HTTP address): write to the primary");
        this.statusTask = loops.group().scheduleAtFixedRate(() -> {
            Channel c = session.channel;
            if (c != null && c.isActive()) {
                receiver.execute(() -> session.status(c::writeAndFlush));
            }
        }, statusIntervalMillis, statusIntervalMillis, TimeUnit.MILLISECONDS);
        connections.connect();
    }

    /** A replica of the primary at {@code primary}, named {@code name} (its name in the primary's sync policy). */
    public static Builder builder(Wal wal, InetSocketAddress primary, String name) {
        return new Builder(wal, primary, name);
    }

    /** Options of a replica; by default plaintext, no secret, no applier, status every 10 s. */
    public static final class Builder {
        private final Wal wal;
        private final InetSocketAddress primary;
        private final String name;
        private byte[] secret;
        private SslContext tls;
        private RecordApplier applier;
        private long applyFrom;
        private long statusIntervalMillis = 10_000;
        private ArchiveTarget archive;
        private EventLoops loops;
        private String primaryHttp;

        private Builder(Wal wal, InetSocketAddress primary, String name) {
            this.wal = wal;
            this.primary = primary;
            this.name = name;
        }

        /**
         * Where applications reach the primary ({@code HOST:PORT} of its HTTP API), when known (a replica group's
         * members publish it): the refusal of local appends names it. Null (default): only the replication address is
         * known, and the refusal says so.
         */
        public Builder primaryHttp(String address) {
            this.primaryHttp = address;
            return this;
        }

        /** The shared secret the primary requires; null for none. */
        public Builder secret(String secret) {
            this.secret = secret == null ? null : secret.getBytes(StandardCharsets.UTF_8);
            return this;
        }

        /** TLS to the primary (see {@link io.walden.replication.tls.ReplicationTls#client}); null for plaintext. */
        public Builder tls(SslContext context) {
            this.tls = context;
            return this;
        }

        /**
         * Hands every flushed record from {@code fromLsn} on (a record boundary: the end of the last record the
         * application applied, or the log's oldest LSN to rebuild its state) to {@code applier}; the replica's
         * applied position is then what the applier took. Without one, applied = flushed.
         */
        public Builder applier(RecordApplier applier, long fromLsn) {
            this.applier = applier;
            this.applyFrom = fromLsn;
            return this;
        }

        /**
         * Where to fetch what the primary no longer keeps (PostgreSQL's restore_command): when the primary answers
         * that this log's end was removed, the archived segments from there on are applied, then streaming resumes.
         * Null (default): such a replica stops with that error. The replica closes the target when it closes.
         */
        public Builder restoreFrom(ArchiveTarget archive) {
            this.archive = archive;
            return this;
        }

        /** How often to report positions when nothing else prompts it (PostgreSQL's wal_receiver_status_interval). */
        public Builder statusIntervalMillis(long millis) {
            if (millis <= 0) {
                throw new IllegalArgumentException("the status interval must be positive");
            }
            this.statusIntervalMillis = millis;
            return this;
        }

        /**
         * The event loops to connect on, e.g. {@link EventLoops#shared} with a process's one group; a shared group is
         * never shut down by {@link ReplicaClient#close()} or {@link ReplicaClient#promote()}, which close only this
         * replica's connections. Default (null): a NIO group of one thread of its own, shut down by either.
         */
        public Builder eventLoops(EventLoops loops) {
            this.loops = loops;
            return this;
        }

        /** Refuses local appends on the log and starts connecting (in the background, with backoff). */
        public ReplicaClient start() {
            return new ReplicaClient(this);
        }
    }

    /**
     * How many times this replica rewound its log since it started following: its primary's history ended this log's
     * epoch below its end (docs/replication.md, "Shipping before the flush").
     */
    public long rewinds() {
        return session.rewinds;
    }

    /** Why the primary refused this replica for good (another log, removed LSN, diverged history, bad secret), or null. */
    public String fatalError() {
        return session.fatal;
    }

    /** Why the last connection attempt or connection failed (null once streaming again): retried with backoff. */
    public String lastError() {
        return session.lastError;
    }

    /** The last failure of the application's applier (the record is retried), or null once it succeeds again. */
    public String applyError() {
        return applier.error();
    }

    /** Whether the primary accepted this replica on the current connection and data may flow (handshake done). */
    public boolean isStreaming() {
        Channel c = session.channel;
        return c != null && c == session.streamingChannel && c.isActive();
    }

    /** Whether a TCP connection to the primary is open (it may still be in its TLS or replication handshake). */
    public boolean isConnected() {
        Channel c = session.channel;
        return c != null && c.isActive();
    }

    /** The primary this replica follows. */
    public InetSocketAddress primary() {
        return primary;
    }

    /** The end of the last record applied (handed to the applier, or flushed when there is none). */
    public long appliedLsn() {
        return applier.applied();
    }

    /** The primary welcomed this replica: the next reconnection waits the shortest. */
    private void reached() {
        connections.reached();
    }

    /** The connection ended: connect again after the backoff. */
    private void retryLater() {
        connections.retryLater();
    }

    /** Bytes this replica fetched from the archive since it started (what its primary no longer kept). */
    public long archiveBytes() {
        return session.archiveBytes;
    }

    /**
     * Makes this replica a primary (PostgreSQL's promote): stops streaming, applies and flushes everything already
     * received, then {@link io.walden.core.replication.ReplicatedLog#promote() begins a new epoch} and accepts local appends. The log stays open (the
     * caller owns it); start a {@code ReplicationServer} on it to serve replicas.
     *
     * @return the new epoch
     * @throws IllegalStateException when this client was closed or already promoted, when the receiver could not
     *                               be stopped (appends stay refused; retry), or when called from the receiver thread
     */
    public Epoch promote() {
        refuseOnReceiverThread("promote()");
        synchronized (lifecycle) {
            if (promoted) {
                throw new IllegalStateException("this replica was already promoted");
            }
            if (session.dropping) {
                throw new IllegalStateException("this replica client is closed");
            }
            if (running && !stop(false)) {
                throw new IllegalStateException("cannot promote: the receiver is still applying (see the log); the log "
                        + "keeps refusing appends; retry the promotion");
            }
            if (!receiver.isTerminated()) {
                throw new IllegalStateException("cannot promote: the receiver is still applying; retry the promotion");
            }
            applier.close(); // the receiver has finished with it (a stop that timed out left it open)
            Epoch epoch = wal.replication().promote(); // on failure nothing changed: a retry tries again
            promoted = true;
            LOG.info("Promoted: the replica of {} is now a primary in epoch {} from {}", primary, epoch.number(),
                    Lsn.format(epoch.startLsn()));
            return epoch;
        }
    }

    /** Disconnects and stops reconnecting; the log stays open (the caller owns it) and keeps refusing appends. */
    @Override
    public void close() {
        refuseOnReceiverThread("close()");
        synchronized (lifecycle) {
            if (running) {
                stop(true);
            }
        }
    }

    /**
     * Stops connecting and receiving and waits for the receiver thread to finish. Never interrupts it: an
     * interrupt inside {@code FileChannel.force} closes the channel and fails the log the caller owns.
     *
     * @param dropQueued drop received frames not yet applied (a close) rather than apply them (a promotion)
     * @return true when the receiver thread has finished
     */
    private boolean stop(boolean dropQueued) {
        running = false;
        session.dropping = dropQueued;
        statusTask.cancel(false);
        connections.stop(session.channel);
        receiver.shutdown();
        boolean stopped;
        try {
            stopped = receiver.awaitTermination(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopped = false;
        }
        if (!stopped) {
            LOG.error("The replica's receiver did not stop within 60 s (an applier or a flush is stuck)");
        }
        loops.shutdownIfOwned(2).awaitUninterruptibly(); // a shared group keeps running: its creator shuts it down
        if (stopped) {
            applier.close();
        }
        if (stopped && session.archive != null) {
            session.archive.close();
        }
        return stopped;
    }

    private void refuseOnReceiverThread(String what) {
        if (Thread.currentThread() == receiverThread) {
            throw new IllegalStateException(what + " from the replica's own receiver thread (an applier callback) "
                    + "would wait for itself; call it from another thread");
        }
    }
}
