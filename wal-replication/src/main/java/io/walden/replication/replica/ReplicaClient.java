package io.walden.replication.replica;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.walden.core.Epoch;
import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.replication.protocol.Frame;
import io.walden.replication.protocol.FrameDecoder;
import io.walden.replication.protocol.FrameDescriptor;
import io.walden.replication.protocol.FrameEncoder;
import io.walden.replication.protocol.ProtocolErrorHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A replica's receiver (docs/replication-protocol.md): connects to the primary, sends its epoch and end, adopts
 * the primary's epoch history, applies what arrives byte for byte ({@link io.walden.core.replication.ReplicatedLog#writeReceived}), flushes it
 * through its own group commit, hands each flushed record to the application's {@link RecordApplier} if one is
 * registered, and reports written, flushed and applied positions after each batch, at a status interval and
 * whenever asked. Reconnects with backoff and resumes exactly at its end. While it runs, local appends are refused
 * with an error that names the primary; {@link #promote()} ends that.
 *
 * <p>Threads: a Netty event loop for the connection, one receiver thread ({@code walden-receiver}) that writes,
 * flushes and applies, in order. Thread-safety: {@link #close()} and {@link #promote()} from any thread.
 */
public final class ReplicaClient implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaClient.class);
    private static final long MAX_BACKOFF_MILLIS = 2000;
    /** A primary sends a keepalive at least every few seconds when idle: silence this long means it is gone. */
    private static final int IDLE_SECONDS = 30;
    /** A primary that accepted the connection but has not welcomed this replica by then is given up on (retried). */
    private static final int HANDSHAKE_SECONDS = 30;
    /** Received but not yet applied bytes above which the replica stops reading (backpressure to the primary). */
    private static final long MAX_PENDING_BYTES = 16L << 20;
    /** A flush is not put off past this many applied bytes or this long, however busy the stream. */
    private static final long MAX_UNFLUSHED_BYTES = 4L << 20;
    private static final long MAX_FLUSH_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final Wal wal;
    private final InetSocketAddress primary;
    private final String name;
    private final byte[] secret;
    private final SslContext tls;
    /** The applied position and the application's applier; the receiver thread's (closed after it stops). */
    private final ApplierDriver applier;
    private final long statusIntervalMillis;
    /** Fetches what the primary removed; null without an archive. The receiver thread's. */
    private final ArchiveCatchUp catchUp;
    private final io.walden.core.archive.ArchiveTarget archive;
    private volatile long archiveBytes;
    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private volatile Thread receiverThread;
    private final ExecutorService receiver = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "walden-receiver");
        t.setDaemon(true);
        receiverThread = t;
        return t;
    });
    private final FrameEncoder encoder = new FrameEncoder();
    private final Object lifecycle = new Object();
    private volatile boolean running = true;
    /** Set by close(): queued frames are dropped, not applied (a later connection resumes from the log's end). */
    private volatile boolean dropping;
    private volatile boolean promoted;
    private java.util.concurrent.ScheduledFuture<?> statusTask;
    private volatile String fatal;
    /** Rewinds of this replica's log since it started following (written by the receiver thread only). */
    private volatile long rewinds;
    /** Why the last connection attempt or connection failed (unreachable, TLS handshake, reset), or null. */
    private volatile String lastError;
    private volatile Channel channel;
    /** The connection whose welcome was taken: streaming while it is the current, open one. */
    private volatile Channel streamingChannel;
    private long backoffMillis = 50;

    private ReplicaClient(Builder b) {
        this.wal = b.wal;
        this.primary = b.primary;
        this.name = b.name;
        this.secret = b.secret == null ? new byte[0] : b.secret;
        this.tls = b.tls;
        this.statusIntervalMillis = b.statusIntervalMillis;
        this.archive = b.archive;
        this.catchUp = b.archive == null ? null : new ArchiveCatchUp(b.wal, b.archive);
        this.applier = new ApplierDriver(wal, b.applier, b.applyFrom);
        wal.replication().refuseAppends("this log is a replica of the primary at " + primary.getHostString() + ":" + primary.getPort()
                + "; write to the primary");
        this.statusTask = group.scheduleAtFixedRate(() -> {
            Channel c = channel;
            if (c != null && c.isActive()) {
                receiver.execute(() -> status(c));
            }
        }, statusIntervalMillis, statusIntervalMillis, TimeUnit.MILLISECONDS);
        connect();
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
        private io.walden.core.archive.ArchiveTarget archive;

        private Builder(Wal wal, InetSocketAddress primary, String name) {
            this.wal = wal;
            this.primary = primary;
            this.name = name;
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
        public Builder restoreFrom(io.walden.core.archive.ArchiveTarget archive) {
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
        return rewinds;
    }

    /** Why the primary refused this replica for good (another log, removed LSN, diverged history, bad secret), or null. */
    public String fatalError() {
        return fatal;
    }

    /** Why the last connection attempt or connection failed (null once streaming again): retried with backoff. */
    public String lastError() {
        return lastError;
    }

    /** The last failure of the application's applier (the record is retried), or null once it succeeds again. */
    public String applyError() {
        return applier.error();
    }

    /** Whether the primary accepted this replica on the current connection and data may flow (handshake done). */
    public boolean isStreaming() {
        Channel c = channel;
        return c != null && c == streamingChannel && c.isActive();
    }

    /** Whether a TCP connection to the primary is open (it may still be in its TLS or replication handshake). */
    public boolean isConnected() {
        Channel c = channel;
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

    private void connect() {
        if (!running) {
            return;
        }
        PrimaryConnections.to(group, primary, tls, () -> {
            FrameDecoder decoder = new FrameDecoder(FrameDescriptor.HANDSHAKE_MAX_FRAME_LENGTH); // raised once welcomed
            return new io.netty.channel.ChannelHandler[] {new IdleStateHandler(IDLE_SECONDS, 0, 0), decoder, encoder,
                    new Receiver(decoder), new ProtocolErrorHandler()};
        })
                .connect(primary).addListener(f -> {
                    if (!f.isSuccess()) {
                        lastError = "cannot connect to " + primary + ": " + f.cause().getMessage();
                        retryLater();
                    }
                });
    }

    private void retryLater() {
        if (!running || fatal != null) {
            return;
        }
        long delay = backoffMillis;
        backoffMillis = Math.min(MAX_BACKOFF_MILLIS, backoffMillis * 2);
        group.schedule(this::connect, delay, TimeUnit.MILLISECONDS);
    }

    /** On the receiver: applies what the archive holds past this log's end; stops the replica when it holds nothing. */
    private void fetchFromArchive(String refusal) {
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

    /** Bytes this replica fetched from the archive since it started (what its primary no longer kept). */
    public long archiveBytes() {
        return archiveBytes;
    }

    /** Reports where this replica stands. On the receiver thread. */
    private void status(Channel c) {
        if (wal.writtenLsn() > wal.flushedLsn()) {
            // Bytes applied without a flush (their batch was cut short by a broken connection): a resumed stream
            // starts after them, so nothing else would flush them, and ON commits would wait for them forever.
            try {
                wal.flush();
            } catch (RuntimeException e) { // failed or closed log: report what is flushed, and nothing more
                LOG.warn("Cannot flush the replica's log before reporting: {}", e.getMessage());
            }
        }
        long flushed = wal.flushedLsn();
        applier.advance();
        c.writeAndFlush(new Frame.Status(wal.writtenLsn(), flushed, applier.applied(), now(), false));
    }

    /**
     * The primary says it flushed everything below {@code lsn}: readers (and the applier) may see this log up to there.
     * Reports at once when that moved what is applied, since {@code REMOTE_APPLY} commits wait for it. On the receiver.
     */
    private void primaryFlushed(Channel c, long lsn) {
        long before = applier.applied();
        wal.replication().raiseReadLimit(lsn);
        applier.advance();
        if (applier.applied() != before) {
            c.writeAndFlush(new Frame.Status(wal.writtenLsn(), wal.flushedLsn(), applier.applied(), now(), false));
        }
    }

    private final class Receiver extends SimpleChannelInboundHandler<Frame> {
        private final FrameDecoder decoder;
        private final AtomicLong pending = new AtomicLong();
        /** Set on the receiver thread once the primary's history is adopted; data is applied only then. */
        private boolean accepted;
        /** Receiver thread only: bytes applied since the last flush, and when that was. */
        private long unflushedBytes;
        private long lastFlushNanos = System.nanoTime();

        Receiver(FrameDecoder decoder) {
            this.decoder = decoder;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            channel = ctx.channel();
            ctx.executor().schedule(() -> {
                if (ctx.channel().isActive() && streamingChannel != ctx.channel()) {
                    lastError = "the primary at " + primary + " did not welcome this replica within " + HANDSHAKE_SECONDS + " s";
                    LOG.warn("{}; reconnecting", lastError);
                    ctx.close();
                }
            }, HANDSHAKE_SECONDS, TimeUnit.SECONDS);
            // On the receiver: after what an earlier connection left queued, so the start is this log's real end.
            receiver.execute(() -> {
                long end = wal.insertLsn();
                Epoch epoch = wal.history().at(end);
                ctx.writeAndFlush(new Frame.Hello(FrameDescriptor.PROTOCOL_VERSION, wal.logId(), epoch.number(),
                        epoch.startLsn(), end, name, secret));
            });
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof IdleStateEvent) {
                LOG.warn("Nothing from the primary at {} for {} s; reconnecting", primary, IDLE_SECONDS);
                ctx.close();
            }
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
            if (frame instanceof Frame.Welcome welcome) {
                if (welcome.logId() != wal.logId() || welcome.segmentSize() != wal.config().segmentSize()) {
                    refuseToFollow(ctx, "the primary's log " + Long.toHexString(welcome.logId()) + " (segments of "
                            + welcome.segmentSize() + " bytes) is not this replica's " + Long.toHexString(wal.logId()));
                    return;
                }
                backoffMillis = 50;
                decoder.maxFrameLength(FrameDescriptor.dataFrameLimit(welcome.segmentSize())); // a record never spans segments
                receiver.execute(() -> {
                    try {
                        rewindIfNeeded(welcome.history());
                        wal.replication().adoptHistory(welcome.history()); // durably, before any byte of it is applied
                    } catch (RuntimeException e) {
                        refuseToFollow(ctx, e.getMessage() + "; rebuild this replica from the primary");
                        return;
                    }
                    accepted = true;
                    streamingChannel = ctx.channel();
                    lastError = null;
                    LOG.info("Streaming from the primary at {} from {} in epoch {} (its flushed end {})", primary,
                            Lsn.format(wal.insertLsn()), welcome.epoch(), Lsn.format(welcome.flushedLsn()));
                    status(ctx.channel()); // where this replica stands, so the primary knows at once
                    primaryFlushed(ctx.channel(), welcome.flushedLsn());
                });
            } else if (frame instanceof Frame.Data data) {
                long start = data.startLsn();
                byte[] bytes = new byte[data.bytes().readableBytes()];
                data.bytes().getBytes(data.bytes().readerIndex(), bytes);
                if (pending.addAndGet(bytes.length) > MAX_PENDING_BYTES) {
                    ctx.channel().config().setAutoRead(false); // the receiver is behind: let TCP push back on the primary
                }
                long primaryFlushed = data.flushedLsn();
                receiver.execute(() -> {
                    try {
                        // Frames received before a connection broke are still applied: they are contiguous, and
                        // the next hello is queued after them, so it starts at their end.
                        if (accepted && !dropping) {
                            apply(ctx, start, bytes);
                            primaryFlushed(ctx.channel(), primaryFlushed);
                        }
                    } finally {
                        if (pending.addAndGet(-bytes.length) <= MAX_PENDING_BYTES / 2 && !ctx.channel().config().isAutoRead()) {
                            ctx.channel().config().setAutoRead(true);
                        }
                    }
                });
            } else if (frame instanceof Frame.Keepalive keepalive) {
                receiver.execute(() -> {
                    if (accepted && !dropping) {
                        primaryFlushed(ctx.channel(), keepalive.flushedLsn());
                    }
                    if (keepalive.replyRequested()) {
                        status(ctx.channel());
                    }
                });
            } else if (frame instanceof Frame.Error error) {
                if (error.code() == Frame.Error.LSN_REMOVED && catchUp != null) {
                    lastError = error.message();
                    LOG.warn("The primary at {} no longer keeps this replica's end: {}; fetching it from the archive {}",
                            primary, error.message(), archive.uri());
                    receiver.execute(() -> fetchFromArchive(error.message())); // before the next hello, which follows it
                    ctx.close();
                    return;
                }
                if (error.code() == Frame.Error.ANOTHER_LOG || error.code() == Frame.Error.LSN_REMOVED
                        || error.code() == Frame.Error.EPOCH_DIVERGED || error.code() == Frame.Error.UNSUPPORTED_VERSION
                        || error.code() == Frame.Error.AUTHENTICATION_FAILED) {
                    fatal = error.message();
                }
                lastError = error.message();
                LOG.error("The primary at {} refused this replica: {}", primary, error.message());
                ctx.close();
            }
        }

        /**
         * When the primary's history ends this log's epoch below this log's end, removes what lies beyond (the primary
         * never had it: docs/replication.md, "Shipping before the flush"), durably, before adopting that history. The
         * primary closes the connection after such a welcome; the next hello starts where the rewind left the log.
         *
         * @throws IllegalStateException when the application's applier already took records beyond that point (the
         *                               replica must be rebuilt: the application's state holds what the primary lacks)
         */
        private void rewindIfNeeded(io.walden.core.EpochHistory primaryHistory) {
            long end = wal.insertLsn();
            Epoch own = wal.history().at(end);
            long to = primaryHistory.find(own.number()) == null
                    ? primaryHistory.rewindPointPastUnknownEpochs(wal.history(), end) // a lost rival's epoch
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

        private void refuseToFollow(ChannelHandlerContext ctx, String why) {
            fatal = why;
            LOG.error("Refusing to follow the primary at {}: {}", primary, why);
            ctx.close();
        }

        /**
         * Writes one frame's bytes and reports them written; flushes (and reports) once no further frame is queued,
         * as PostgreSQL's walreceiver flushes after draining its socket: one force covers every frame that arrived
         * during the last one. Bounded, so that a continuous stream still flushes at least every millisecond.
         */
        private void apply(ChannelHandlerContext ctx, long start, byte[] bytes) {
            try {
                long end = wal.replication().writeReceived(start, ByteBuffer.wrap(bytes));
                ctx.writeAndFlush(new Frame.Status(end, wal.flushedLsn(), applier.applied(), now(), false));
                unflushedBytes += bytes.length;
                boolean moreQueued = pending.get() > bytes.length;
                if (!moreQueued || unflushedBytes >= MAX_UNFLUSHED_BYTES
                        || System.nanoTime() - lastFlushNanos >= MAX_FLUSH_DELAY_NANOS) {
                    wal.flush();
                    unflushedBytes = 0;
                    lastFlushNanos = System.nanoTime();
                    status(ctx.channel());
                }
            } catch (RuntimeException | Error e) {
                accepted = false; // the rest of this connection's frames cannot follow; the next hello resumes
                LOG.error("Could not apply replicated bytes at {}: {}; reconnecting", Lsn.format(start), e.toString());
                ctx.close();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            Throwable root = cause;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            lastError = root.getClass().getSimpleName() + ": " + root.getMessage();
            LOG.warn("Connection to the primary at {} failed: {}", primary, lastError);
            ctx.fireExceptionCaught(cause);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            channel = null;
            retryLater();
        }
    }

    private static long now() {
        return TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
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
            if (dropping) {
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
        dropping = dropQueued;
        statusTask.cancel(false);
        Channel c = channel;
        if (c != null) {
            c.close().awaitUninterruptibly();
        }
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
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        if (stopped) {
            applier.close();
        }
        if (stopped && archive != null) {
            archive.close();
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
