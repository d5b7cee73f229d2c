package io.walden.replication.primary;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.walden.core.Durability;
import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.core.commit.RemoteWaits;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.protocol.Frame;
import io.walden.replication.protocol.FrameDecoder;
import io.walden.replication.protocol.FrameDescriptor;
import io.walden.replication.protocol.FrameEncoder;
import io.walden.replication.protocol.ProtocolErrorHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.netty.handler.ssl.SslContext;
import io.walden.core.EpochHistory;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A primary's replication endpoint (docs/replication-protocol.md): the handshake's checks (version, secret, log
 * id, epoch history, retained LSN), optionally over TLS. Each
 * replica connection gets a {@link Sender} thread that streams flushed log bytes; the replicas' status frames
 * feed the synchronous policy, whose confirmed positions release remote-level commits through
 * {@link io.walden.core.replication.ReplicatedLog#remoteWaits()}.
 *
 * <p>Thread-safety: {@link #policy(SyncPolicy)} and {@link #close()} from any thread.
 */
public final class ReplicationServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicationServer.class);

    private final Wal wal;
    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final Map<String, ReplicaState> replicas = new ConcurrentHashMap<>();
    private final FrameEncoder encoder = new FrameEncoder();
    private final ProtocolErrorHandler errors = new ProtocolErrorHandler();
    private final long keepaliveNanos;
    private final boolean shipFlushedOnly;
    private final long maxSlotRetainedBytes;
    private final int maxReplicas;
    /** The shared secret a hello must carry, or null when none is required. */
    private final byte[] secret;
    /**
     * Replication slots, by replica name: the flushed position each replica confirmed, kept while it is away so
     * that truncation does not remove what it will ask for. Saved in walden.slots (SlotFile) so that a restart
     * keeps them.
     */
    private final Map<String, Long> slots = new ConcurrentHashMap<>();
    /** Set when slots changed since they were last saved. */
    private final java.util.concurrent.atomic.AtomicBoolean slotsChanged = new java.util.concurrent.atomic.AtomicBoolean();
    private java.util.concurrent.ScheduledFuture<?> slotSaver;
    private final Channel channel;
    private final java.util.List<io.micrometer.core.instrument.MeterRegistry> registries = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile SyncPolicy policy;

    /**
     * A connected replica's reported positions. They start unknown (0): the start LSN of its hello is what it
     * has written, not what it has flushed. It counts for the synchronous policy only once it has caught up
     * with the backlog it had when it connected (PostgreSQL's "streaming" state), so a replica returning far
     * behind does not stall commits that a caught-up one could confirm.
     */
    static final class ReplicaState {
        final String name;
        final long catchUpTarget;
        volatile long written;
        volatile long flushed;
        volatile long applied;
        volatile boolean streaming;
        /** Lags in milliseconds (PostgreSQL's write/flush/replay lag): from sending a position until it was reported. */
        volatile long writeLagMillis = -1;
        volatile long flushLagMillis = -1;
        volatile long applyLagMillis = -1;
        /** Sent positions and when, oldest first; bounded (older samples are dropped). Guarded by itself. */
        private final java.util.ArrayDeque<long[]> sent = new java.util.ArrayDeque<>();
        private static final int MAX_SAMPLES = 4096;

        ReplicaState(String name, long catchUpTarget, long startLsn) {
            this.name = name;
            this.catchUpTarget = catchUpTarget;
            this.sentLsn = startLsn;
        }

        /**
         * Where the replica's log ends if it took everything sent on this connection: its start LSN, then the end of
         * each chunk sent (past the next segment's header after a closing record). Written by the sender thread.
         */
        volatile long sentLsn;

        void sent(long endLsn, long nanos) {
            sentLsn = endLsn;
            synchronized (sent) {
                if (sent.size() == MAX_SAMPLES) {
                    sent.pollFirst();
                }
                sent.addLast(new long[] {endLsn, nanos});
            }
        }

        /** The lag of the newest sent position at or below {@code lsn}, in ms, or -1 if none is known. */
        long lagFor(long lsn, long now) {
            synchronized (sent) {
                long time = -1;
                for (long[] sample : sent) {
                    if (sample[0] > lsn) {
                        break;
                    }
                    time = sample[1];
                }
                return time < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(now - time);
            }
        }

        /** Forgets samples every level has passed, keeping the newest one at or below {@code lsn}. */
        void trim(long lsn) {
            synchronized (sent) {
                while (sent.size() > 1) {
                    long[] first = sent.pollFirst();
                    if (sent.peekFirst()[0] > lsn) {
                        sent.addFirst(first);
                        return;
                    }
                }
            }
        }
    }

    /** Saves the slots (two forces): on a thread of its own, where it delays nothing else. */
    private final java.util.concurrent.ExecutorService slotWriter = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "walden-slot-writer");
        t.setDaemon(true);
        return t;
    });
    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();

    /** Completes asynchronous remote commits off the event loop: their callbacks must not stall replication. */
    private final java.util.concurrent.ExecutorService releaser = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "walden-sync-release");
        t.setDaemon(true);
        return t;
    });

    /** A primary's replication endpoint for {@code wal}: set the options, then {@link Builder#start()}. */
    public static Builder builder(Wal wal) {
        return new Builder(wal);
    }

    /** Options of a replication endpoint; the defaults are safe: loopback, no secret, no TLS. */
    public static final class Builder {
        private final Wal wal;
        private InetSocketAddress listen = new InetSocketAddress("127.0.0.1", 7401);
        private long keepaliveMillis = 10_000;
        private long maxSlotRetainedBytes = 4L << 30;
        private long handshakeTimeoutMillis = 10_000;
        private int maxReplicas = 16;
        private byte[] secret;
        private SslContext tls;
        private boolean shipFlushedOnly;

        private Builder(Wal wal) {
            this.wal = wal;
        }

        /** Where to accept replicas (default 127.0.0.1:7401; port 0 picks a free one). */
        public Builder listen(InetSocketAddress address) {
            this.listen = address;
            return this;
        }

        /**
         * The sender timeout (PostgreSQL's {@code wal_sender_timeout}, default 10 s): a keepalive asking for a reply
         * goes out after half of it idle, and a replica silent for twice it is dropped.
         */
        public Builder keepaliveMillis(long millis) {
            this.keepaliveMillis = millis;
            return this;
        }

        /**
         * The most log a replication slot may hold back (default 4 GiB); a slot further behind is dropped (its
         * replica then gets "already removed" and must be rebuilt): a dead replica never fills the primary's disk.
         */
        public Builder maxSlotRetainedBytes(long bytes) {
            this.maxSlotRetainedBytes = bytes;
            return this;
        }

        /**
         * How long a connection may go without a valid hello (TLS handshake included) before it is closed (default
         * 10 s): an idle or stalled peer does not hold a connection.
         */
        public Builder handshakeTimeoutMillis(long millis) {
            if (millis <= 0) {
                throw new IllegalArgumentException("the handshake timeout must be positive");
            }
            this.handshakeTimeoutMillis = millis;
            return this;
        }

        /**
         * The most replicas this primary serves and slots it keeps (default 16; PostgreSQL's max_wal_senders and
         * max_replication_slots): a replica with a new name beyond it is refused with "retry later" until a slot is
         * dropped ({@link ReplicationServer#dropSlot}) or falls past the retention cap.
         */
        public Builder maxReplicas(int max) {
            if (max < 1) {
                throw new IllegalArgumentException("max-replicas must be at least 1");
            }
            this.maxReplicas = max;
            return this;
        }

        /** The shared secret every replica's hello must carry (compared in constant time); null for none. */
        public Builder secret(String secret) {
            this.secret = secret == null ? null : secret.getBytes(StandardCharsets.UTF_8);
            return this;
        }

        /** TLS for every replica connection (see {@link io.walden.replication.tls.ReplicationTls#server}); null for plaintext. */
        public Builder tls(SslContext context) {
            this.tls = context;
            return this;
        }

        /**
         * PostgreSQL's rule: ship only records this log has flushed, so that a replica never holds one this log could
         * lose, at the price of a synchronous commit paying both forces one after the other. By default (false) records
         * leave once they are written here, and the replica's write and force overlap this log's force
         * (docs/replication.md, "Shipping before the flush").
         */
        public Builder shipFlushedOnly(boolean flushedOnly) {
            this.shipFlushedOnly = flushedOnly;
            return this;
        }

        /**
         * Binds and starts accepting replicas.
         *
         * @throws IllegalStateException when shipping before the flush and the log, opened after a crash, began no new
         *                               epoch (open it with {@code WalConfig.Builder.newEpochAfterCrash(true)}): its
         *                               replicas may hold records it lost, and nothing would tell them apart from the
         *                               ones it appends next
         */
        public ReplicationServer start() throws InterruptedException {
            if (!shipFlushedOnly && !wal.replication().mayShipUnflushed()) {
                throw new IllegalStateException("the log in " + wal.directory() + " was not closed cleanly and began no "
                        + "new epoch since: a replica may hold records it lost in the crash. Open it with "
                        + "WalConfig.Builder.newEpochAfterCrash(true) (walden serve does), or ship flushed records only");
            }
            return new ReplicationServer(this);
        }
    }

    private ReplicationServer(Builder b) throws InterruptedException {
        this.wal = b.wal;
        this.maxSlotRetainedBytes = b.maxSlotRetainedBytes;
        this.maxReplicas = b.maxReplicas;
        this.keepaliveNanos = TimeUnit.MILLISECONDS.toNanos(b.keepaliveMillis);
        this.shipFlushedOnly = b.shipFlushedOnly;
        this.secret = b.secret;
        SslContext tls = b.tls;
        long idleMillis = b.keepaliveMillis * 2;
        long handshakeTimeoutMillis = b.handshakeTimeoutMillis;
        restoreSlots();
        wal.replication().retentionFloor(this::retentionFloor); // before accepting: a truncation meanwhile respects the slots
        Channel bound;
        try {
            bound = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            if (tls != null) {
                                ch.pipeline().addLast(tls.newHandler(ch.alloc()));
                            }
                            ch.pipeline().addLast(new IdleStateHandler(idleMillis, 0, 0, TimeUnit.MILLISECONDS),
                                    new FrameDecoder(FrameDescriptor.HANDSHAKE_MAX_FRAME_LENGTH), encoder,
                                    new Connection(handshakeTimeoutMillis), errors);
                        }
                    }).bind(b.listen).sync().channel();
        } catch (RuntimeException | InterruptedException e) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            releaser.shutdown();
            slotWriter.shutdown();
            wal.replication().retentionFloor(null);
            throw e;
        }
        this.channel = bound;
        slotSaver = group.scheduleAtFixedRate(() -> slotWriter.execute(this::saveSlots), 1, 1, TimeUnit.SECONDS);
        LOG.info("Accepting replicas on {} ({}{})", address(), tls == null ? "plaintext" : "TLS",
                secret == null ? ", no secret" : ", shared secret required");
    }

    public InetSocketAddress address() {
        return (InetSocketAddress) channel.localAddress();
    }

    /** Sets (or with null clears) the synchronous policy, live; clearing releases every waiting commit. */
    public void policy(SyncPolicy newPolicy) {
        this.policy = newPolicy;
        RemoteWaits waits = wal.replication().remoteWaits();
        if (newPolicy == null) {
            waits.deactivate();
        } else {
            waits.activate();
            release();
        }
    }

    /**
     * Meters per replica (PostgreSQL's pg_stat_replication as meters): {@code walden.replica.lsn} gauges tagged
     * {@code replica} and {@code position} = write/flush/apply, and {@code walden.replica.lag} timers with the
     * same tags, recorded at each status (time from sending a position until the replica reported it).
     */
    public io.micrometer.core.instrument.binder.MeterBinder meterBinder() {
        return registry -> {
            registries.add(registry);
            replicas.values().forEach(state -> registerGauges(registry, state));
        };
    }

    private static void registerGauges(io.micrometer.core.instrument.MeterRegistry registry, ReplicaState state) {
        io.micrometer.core.instrument.Gauge.builder("walden.replica.lsn", state, s -> s.written)
                .tags("replica", state.name, "position", "write").register(registry);
        io.micrometer.core.instrument.Gauge.builder("walden.replica.lsn", state, s -> s.flushed)
                .tags("replica", state.name, "position", "flush").register(registry);
        io.micrometer.core.instrument.Gauge.builder("walden.replica.lsn", state, s -> s.applied)
                .tags("replica", state.name, "position", "apply").register(registry);
    }

    private void recordLags(ReplicaState state) {
        for (io.micrometer.core.instrument.MeterRegistry registry : registries) {
            lag(registry, state.name, "write", state.writeLagMillis);
            lag(registry, state.name, "flush", state.flushLagMillis);
            lag(registry, state.name, "apply", state.applyLagMillis);
        }
    }

    private static void lag(io.micrometer.core.instrument.MeterRegistry registry, String replica, String position, long millis) {
        if (millis >= 0) {
            io.micrometer.core.instrument.Timer.builder("walden.replica.lag").tags("replica", replica, "position", position)
                    .description("Time from sending a position until the replica reported it").register(registry)
                    .record(millis, TimeUnit.MILLISECONDS);
        }
    }

    /** The oldest LSN a slot still needs (slots too far behind are dropped first). */
    private long retentionFloor() {
        long insert = wal.insertLsn();
        long floor = Long.MAX_VALUE;
        for (Map.Entry<String, Long> slot : slots.entrySet()) {
            if (insert - slot.getValue() > maxSlotRetainedBytes) {
                if (slots.remove(slot.getKey(), slot.getValue())) {
                    slotChanged();
                    LOG.warn("Dropping the replication slot of '{}': it holds back {} bytes, more than the {} allowed; that "
                            + "replica will have to be rebuilt", slot.getKey(), insert - slot.getValue(), maxSlotRetainedBytes);
                }
                continue;
            }
            floor = Math.min(floor, slot.getValue());
        }
        return floor;
    }

    /** Takes the saved slots back, except those that can no longer be served or that this log never reached. */
    private void restoreSlots() {
        SlotFile.read(wal.directory()).forEach((name, lsn) -> {
            if (!SyncPolicy.isValidName(name) || lsn < wal.oldestLsn() || lsn > wal.flushedLsn()) {
                LOG.warn("Dropping the saved replication slot of '{}' at {}: the log now holds {} to {}", name,
                        Lsn.format(lsn), Lsn.format(wal.oldestLsn()), Lsn.format(wal.flushedLsn()));
                slotChanged();
            } else {
                slots.put(name, lsn);
            }
        });
        if (!slots.isEmpty()) {
            LOG.info("Replication slots kept from before: {}", slots);
        }
    }

    /** Saves the slots if they changed. On the slot writer (it forces files: never on the event loop). */
    private void saveSlots() {
        if (!slotsChanged.getAndSet(false)) {
            return;
        }
        try {
            SlotFile.write(wal.directory(), slots);
        } catch (java.io.IOException | RuntimeException e) {
            slotsChanged.set(true); // retried at the next tick
            LOG.warn("Cannot save the replication slots in {}: {}", wal.directory(), e.toString());
        }
    }

    private void slotChanged() {
        slotsChanged.set(true);
    }

    /** The replication slots: replica name → the LSN it still needs. */
    public Map<String, Long> slots() {
        return Map.copyOf(slots);
    }

    /** The synchronous policy in force, or null. */
    public SyncPolicy policy() {
        return policy;
    }

    /** The connected replica named {@code name}, as in {@link #replicaStatus()}, if it is connected. */
    public java.util.Optional<ReplicaStatus> replica(String name) {
        return replicaStatus().stream().filter(r -> r.name().equals(name)).findFirst();
    }

    /**
     * The connected replicas, as PostgreSQL's {@code pg_stat_replication}: positions, lags and sync state. For
     * {@code FIRST n}, the n highest-priority streaming replicas are {@code sync} and the other named ones
     * {@code potential}; for {@code ANY n}, every streaming named replica is {@code quorum}.
     */
    public java.util.List<ReplicaStatus> replicaStatus() {
        SyncPolicy p = policy;
        java.util.List<ReplicaState> states = new java.util.ArrayList<>(replicas.values());
        java.util.Set<String> sync = new java.util.HashSet<>();
        if (p != null && !p.isQuorum()) {
            for (String name : p.names()) { // priority order
                ReplicaState s = replicas.get(name);
                if (s != null && s.streaming && sync.size() < p.count()) {
                    sync.add(name);
                }
            }
        }
        java.util.List<ReplicaStatus> out = new java.util.ArrayList<>();
        for (ReplicaState s : states) {
            boolean named = p != null && p.names().contains(s.name);
            String syncState = !named ? "async" : !s.streaming ? "potential" : p.isQuorum() ? "quorum"
                    : sync.contains(s.name) ? "sync" : "potential";
            out.add(new ReplicaStatus(s.name, s.streaming ? "streaming" : "catchup", s.sentLsn, s.written, s.flushed,
                    s.applied, s.writeLagMillis, s.flushLagMillis, s.applyLagMillis, syncState));
        }
        out.sort(java.util.Comparator.comparing(ReplicaStatus::name));
        return out;
    }

    /** Recomputes the policy's confirmed position per level and releases the commits below it. */
    private void release() {
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
        RemoteWaits waits = wal.replication().remoteWaits();
        waits.advance(Durability.REMOTE_WRITE, p.confirmed(written), releaser);
        waits.advance(Durability.ON, p.confirmed(flushed), releaser);
        waits.advance(Durability.REMOTE_APPLY, p.confirmed(applied), releaser);
    }

    /** One replica connection: the handshake, then status frames; a Sender streams the data. */
    private final class Connection extends SimpleChannelInboundHandler<Frame> {
        private final long handshakeTimeoutMillis;
        private ReplicaState state;
        private Sender sender;

        Connection(long handshakeTimeoutMillis) {
            this.handshakeTimeoutMillis = handshakeTimeoutMillis;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            // A peer that connects and says nothing (or stalls its TLS handshake) does not hold a connection for good.
            ctx.executor().schedule(() -> {
                if (state == null && ctx.channel().isActive()) {
                    refuse(ctx, Frame.Error.MALFORMED, "no hello within " + handshakeTimeoutMillis + " ms");
                }
            }, handshakeTimeoutMillis, TimeUnit.MILLISECONDS);
            ctx.fireChannelActive();
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
            if (frame instanceof Frame.Hello hello) {
                onHello(ctx, hello);
            } else if (frame instanceof Frame.Status status && state != null) {
                // A replica cannot hold more than was sent to it on this connection (plus what it had): a report
                // beyond that is a lie or a bug, and taken as it came it would release ON commits after a local
                // flush only and let its slot stop protecting the real replica. Clamp, never trust.
                long sent = state.sentLsn;
                state.written = Math.max(state.written, Math.min(status.writtenLsn(), sent));
                state.flushed = Math.max(state.flushed, Math.min(status.flushedLsn(), sent));
                state.applied = Math.max(state.applied, Math.min(status.appliedLsn(), sent));
                long now = System.nanoTime();
                state.writeLagMillis = state.lagFor(state.written, now);
                state.flushLagMillis = state.lagFor(state.flushed, now);
                state.applyLagMillis = state.lagFor(state.applied, now);
                state.trim(Math.min(state.written, Math.min(state.flushed, state.applied)));
                recordLags(state);
                Long slot = slots.get(state.name);
                if (slot == null || state.flushed > slot) {
                    slots.merge(state.name, state.flushed, Math::max);
                    slotChanged();
                }
                if (!state.streaming && state.flushed >= state.catchUpTarget) {
                    state.streaming = true;
                    LOG.info("Replica '{}' caught up at {}", state.name, Lsn.format(state.flushed));
                }
                release(); // blocked commits are unparked from here; asynchronous ones complete on the releaser
            } else {
                refuse(ctx, Frame.Error.MALFORMED, "unexpected " + frame.getClass().getSimpleName() + " frame");
            }
        }

        private void onHello(ChannelHandlerContext ctx, Frame.Hello hello) {
            if (state != null) {
                refuse(ctx, Frame.Error.MALFORMED, "a second hello on one connection");
                return;
            }
            EpochHistory history = wal.history();
            HandshakeCheck.Answer answer = HandshakeCheck.answer(hello, new HandshakeCheck.Primary(history, wal.logId(),
                    wal.oldestLsn(), wal.replication().shippableLsn(!shipFlushedOnly), wal.appendsRefusedReason() != null,
                    secret, slots.containsKey(hello.name()), slots.size(), replicas.size(), maxReplicas));
            if (answer instanceof HandshakeCheck.Refuse r) {
                refuse(ctx, r.code(), r.message());
            } else if (answer instanceof HandshakeCheck.Identify) {
                ctx.writeAndFlush(welcome(history)).addListener(io.netty.channel.ChannelFutureListener.CLOSE);
            } else if (answer instanceof HandshakeCheck.Rewind rewind) {
                LOG.info("Replica '{}': {}; it rewinds and reconnects", hello.name(), rewind.why());
                ctx.writeAndFlush(welcome(history)).addListener(io.netty.channel.ChannelFutureListener.CLOSE);
            } else if (replicas.putIfAbsent(hello.name(), new ReplicaState(hello.name(), wal.flushedLsn(), hello.startLsn())) != null) {
                refuse(ctx, Frame.Error.MALFORMED, "a replica named '" + hello.name() + "' is already connected");
            } else {
                state = replicas.get(hello.name());
                slots.merge(hello.name(), hello.startLsn(), Math::min); // hold its start until it confirms more
                slotChanged();
                for (io.micrometer.core.instrument.MeterRegistry registry : registries) {
                    registerGauges(registry, state);
                }
                ctx.writeAndFlush(welcome(history));
                sender = new Sender(wal, ctx.channel(), hello.startLsn(), keepaliveNanos, history, !shipFlushedOnly, state::sent);
                sender.start();
                LOG.info("Replica '{}' connected from {} at {} (epoch {})", hello.name(), ctx.channel().remoteAddress(),
                        Lsn.format(hello.startLsn()), hello.epoch());
            }
        }

        private Frame.Welcome welcome(EpochHistory history) {
            long oldest = wal.oldestLsn(); // before the flushed position: it never passes a flushed position read after it
            return new Frame.Welcome(FrameDescriptor.PROTOCOL_VERSION, wal.logId(), wal.config().segmentSize(),
                    history.current().number(), wal.flushedLsn(), oldest, history);
        }

        private void refuse(ChannelHandlerContext ctx, int code, String message) {
            LOG.warn("Refusing replica connection from {}: {}", ctx.channel().remoteAddress(), message);
            ctx.writeAndFlush(new Frame.Error(code, message)).addListener(io.netty.channel.ChannelFutureListener.CLOSE);
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof IdleStateEvent) {
                LOG.warn("Replica {} sent nothing for too long; dropping it", state == null ? ctx.channel().remoteAddress() : state.name);
                ctx.close();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (sender != null) {
                sender.stop();
            }
            if (state != null) {
                replicas.remove(state.name, state);
                for (io.micrometer.core.instrument.MeterRegistry registry : registries) {
                    removeMeters(registry, state.name); // per-connection meters: they do not pile up with names
                }
                LOG.info("Replica '{}' disconnected", state.name);
            }
        }
    }

    private static void removeMeters(io.micrometer.core.instrument.MeterRegistry registry, String replica) {
        for (String name : new String[] {"walden.replica.lsn", "walden.replica.lag"}) {
            for (io.micrometer.core.instrument.Meter m : registry.find(name).tag("replica", replica).meters()) {
                registry.remove(m);
            }
        }
    }

    /**
     * Drops the slot of a replica that is not connected (it is gone for good): truncation no longer keeps what it
     * needed, and its place counts no more against {@code maxReplicas}.
     *
     * @return false when there was no such slot
     * @throws IllegalStateException when that replica is connected now
     */
    public boolean dropSlot(String name) {
        if (replicas.containsKey(name)) {
            throw new IllegalStateException("replica '" + name + "' is connected: stop it before dropping its slot");
        }
        boolean dropped = slots.remove(name) != null;
        if (dropped) {
            slotChanged();
            LOG.info("Dropped the replication slot of '{}'", name);
        }
        return dropped;
    }

    /**
     * Stops accepting and streaming and saves the slots. Commits waiting for the replicas fail with
     * {@link io.walden.core.RemoteCommitUnconfirmedException} (durable locally, not confirmed), as do later ones
     * at a remote level while the policy stands: no replica can confirm them now. Close it before the log.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        channel.close().awaitUninterruptibly();
        slotSaver.cancel(false);
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        releaser.shutdown();
        slotWriter.execute(this::saveSlots); // the last positions, after every status was taken
        slotWriter.shutdown();
        try {
            slotWriter.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        wal.replication().retentionFloor(null);
        if (policy != null) {
            // The policy stands; only its confirmations stop. Commits waiting for them fail as "durable locally, not
            // confirmed" and are never released as LOCAL: an operator stopping a primary to fail over must not have
            // acknowledged ON records that no replica holds.
            wal.replication().remoteWaits().detach("replication stopped (the replication endpoint closed)");
        }
    }
}
