package io.walden.replication.primary;

import io.micrometer.core.instrument.binder.MeterBinder;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateHandler;
import io.walden.core.Wal;
import io.walden.core.WalStore;
import io.walden.core.internal.thread.LoopGroup;
import io.walden.replication.policy.SyncPolicy;
import io.walden.replication.protocol.FrameDecoder;
import io.walden.replication.protocol.FrameDescriptor;
import io.walden.replication.protocol.FrameEncoder;
import io.walden.replication.protocol.ProtocolErrorHandler;
import io.walden.replication.transport.EventLoops;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A primary's replication endpoint (docs/replication-protocol.md), optionally over TLS: it owns the listening
 * channel ({@link ReplicaChannels}), its logs ({@link PrimaryLogs}: the root log, and a store's named logs when given
 * one, each with the replicas streaming it, their slots and its synchronous waits), every log's replica meters
 * ({@link ReplicaMeters}) and the one synchronous policy of every log. Each connection is a {@link ReplicaConnection}:
 * the root log alone (protocol version 5) or every log (version 6); each log's stream a {@link LogStream}, whose
 * {@link Sender} streams its bytes.
 *
 * <p>Threads: its event loops ({@link Builder#eventLoops}: by default a NIO group of one thread of its own) and
 * {@value #SENDER_THREADS} sender threads ({@code walden-senders-1} ...) that run every stream's {@link Sender}, however
 * many logs and replicas there are, started with the first stream and ended by {@link #close()}. Thread-safety: {@link #policy(SyncPolicy)} and {@link #close()} from any thread but one of
 * those event loops.
 */
public final class ReplicationServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicationServer.class);
    /**
     * The threads every stream's sender runs on. More than one: a stream's turn may fault a cold page in from disk (a
     * replica catching up from old segments), and the streams of the tail, whose pages are in memory and whose turns
     * take microseconds, must not wait behind it; a few, not one per stream: a thousand logs times two replicas are two
     * thousand streams, mostly idle. A turn copies at most one chunk ({@code MAX_CHUNK}) and yields, so the busy
     * streams share the threads fairly; the frames are encoded and written on the event loops, not here.
     */
    static final int SENDER_THREADS = 4;

    private final Wal wal;
    private final ReplicaChannels channels;
    private final PrimaryLogs logs;
    /** The root log's replicas. */
    private final Map<String, ReplicaState> replicas;
    private final FrameEncoder encoder = new FrameEncoder();
    private final ProtocolErrorHandler errors = new ProtocolErrorHandler();
    private final ReplicaMeters meters = new ReplicaMeters();
    private final LoopGroup senders = new LoopGroup("walden-senders", SENDER_THREADS);
    private ScheduledFuture<?> slotSaver;

    private final AtomicBoolean closed = new AtomicBoolean();

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
        private EventLoops loops;
        private Supplier<WalStore> store = () -> null;
        private Function<String, Map<String, String>> logSettings = name -> Map.of();

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
         * The event loops to run on, e.g. {@link EventLoops#shared} with a process's one group; a shared group is
         * never shut down by {@link ReplicationServer#close()}, which closes only this endpoint's channels. Default
         * (null): a NIO group of one thread of its own, shut down by close.
         */
        public Builder eventLoops(EventLoops loops) {
            this.loops = loops;
            return this;
        }

        /**
         * Replicates the named logs of {@code store} too, over protocol version 6 (docs/replication-protocol.md,
         * "Version 6"), with the root log as the log {@code default}; call {@link ReplicationServer#refreshLogs()} after
         * creating or deleting one of its logs. Null (default): the root log alone (a version 6 replica sees a catalog of
         * {@code default} only).
         *
         * @param settings a log's settings as replicas are told them (the user's setting names and values), by log name
         */
        public Builder store(WalStore store, Function<String, Map<String, String>> settings) {
            return store(() -> store, settings);
        }

        /**
         * As {@link #store(WalStore, Function)}, for a store opened later (an application that opens it at its first
         * named log): {@code store} gives null until then, and {@link ReplicationServer#refreshLogs()} takes its logs
         * once it is open.
         */
        public Builder store(Supplier<WalStore> store, Function<String, Map<String, String>> settings) {
            this.store = store == null ? () -> null : store;
            this.logSettings = settings == null ? name -> Map.of() : settings;
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
            List<Wal> all = new ArrayList<>(List.of(wal));
            WalStore s = store.get();
            if (s != null) {
                s.names().forEach(name -> s.log(name).ifPresent(all::add));
            }
            for (Wal log : all) {
                checkMayShipUnflushed(log);
            }
            return new ReplicationServer(this);
        }

        private void checkMayShipUnflushed(Wal wal) {
            if (!shipFlushedOnly && !wal.replication().mayShipUnflushed()) {
                throw new IllegalStateException("the log in " + wal.directory() + " was not closed cleanly and began no "
                        + "new epoch since: a replica may hold records it lost in the crash. Open it with "
                        + "WalConfig.Builder.newEpochAfterCrash(true) (walden serve does), or ship flushed records only");
            }
        }
    }

    private ReplicationServer(Builder b) throws InterruptedException {
        this.wal = b.wal;
        SslContext tls = b.tls;
        long idleMillis = b.keepaliveMillis * 2;
        // Before accepting: a truncation meanwhile respects the slots.
        this.logs = new PrimaryLogs(wal, b.store, b.maxSlotRetainedBytes, b.logSettings);
        this.replicas = logs.root().replicas;
        this.channels = new ReplicaChannels(b.loops == null ? EventLoops.ownNio() : b.loops);
        Set<String> connected = ConcurrentHashMap.newKeySet();
        ReplicaConnection.Endpoint endpoint = new ReplicaConnection.Endpoint(logs, new LogStream.Settings(meters,
                TimeUnit.MILLISECONDS.toNanos(b.keepaliveMillis), b.shipFlushedOnly, b.secret, b.maxReplicas,
                b.handshakeTimeoutMillis, senders), connected);
        try {
            channels.bind(b.listen, ch -> {
                if (tls != null) {
                    ch.pipeline().addLast(tls.newHandler(ch.alloc()));
                }
                ch.pipeline().addLast(new IdleStateHandler(idleMillis, 0, 0, TimeUnit.MILLISECONDS),
                        new FrameDecoder(FrameDescriptor.HANDSHAKE_MAX_FRAME_LENGTH), encoder,
                        new ReplicaConnection(endpoint), errors);
            }); // on failure it shut an own group down
        } catch (Exception e) { // a failed bind: IllegalStateException (ReplicaChannels.bind)
            logs.abandon();
            throw e;
        }
        slotSaver = channels.group().scheduleAtFixedRate(() -> logs.all().forEach(log -> log.slots.saveSoon()), 1, 1,
                TimeUnit.SECONDS);
        LOG.info("Accepting replicas on {} ({}{})", address(), tls == null ? "plaintext" : "TLS",
                b.secret == null ? ", no secret" : ", shared secret required");
    }

    public InetSocketAddress address() {
        return channels.address();
    }

    /**
     * Sets (or with null clears) the synchronous policy, live, of every log (the root log and a store's); clearing
     * releases every waiting commit.
     */
    public void policy(SyncPolicy newPolicy) {
        logs.policy(newPolicy);
    }

    /**
     * Gives log {@code log} a synchronous policy of its own instead of the server's, live, and whenever the log is served
     * again (reopened, or deleted and created again under its name) until {@link #inheritPolicy}: a cluster's primary
     * waits for each log's own in-sync replicas (docs/cluster.md, "Who may lead a log"). Null: none, the log's commits
     * act as LOCAL (those waiting are released).
     */
    public void logPolicy(String log, SyncPolicy policy) {
        logs.policy(log, policy);
    }

    /** Log {@code log} takes the server's policy again ({@link #policy(SyncPolicy)}). */
    public void inheritPolicy(String log) {
        logs.inheritPolicy(log);
    }

    /** The synchronous policy log {@code log} is served with, its own or the server's, or null. */
    public SyncPolicy logPolicy(String log) {
        return logs.policyOf(log);
    }

    /**
     * Takes the store's logs as they are now (see {@link Builder#store}): call it after creating or deleting a log. A log
     * created is served and announced to every version 6 replica connected; a deleted one is dropped from their catalogs
     * (they delete their copies) and its streams end. Idempotent.
     */
    public void refreshLogs() {
        logs.refresh();
    }

    /** Log {@code name}'s settings changed: every version 6 replica connected is told them again. */
    public void logChanged(String name) {
        logs.changed(name);
    }

    /** The logs served, {@code default} first. */
    public List<String> logs() {
        return logs.all().stream().map(log -> log.name).toList();
    }

    /** Each log's per-replica positions and lags as meters ({@link ReplicaMeters}: {@code walden.replica.lsn}, {@code walden.replica.lag}). */
    public MeterBinder meterBinder() {
        return registry -> {
            Map<String, Collection<ReplicaState>> connected = new LinkedHashMap<>();
            for (LogEndpoint log : logs.all()) {
                connected.put(log.name, log.replicas.values());
            }
            meters.binder(connected).bindTo(registry);
        };
    }

    /** The replication slots of the root log: replica name → the LSN it still needs. */
    public Map<String, Long> slots() {
        return logs.root().slots.snapshot();
    }

    /** The replication slots of log {@code log} (replica name → the LSN it still needs); empty for a log not served. */
    public Map<String, Long> slots(String log) {
        LogEndpoint l = logs.get(log);
        return l == null ? Map.of() : l.slots.snapshot();
    }

    /** The synchronous policy in force, or null. */
    public SyncPolicy policy() {
        return logs.policy();
    }

    /** The connected replica named {@code name}, as in {@link #replicaStatus()}, if it is connected. */
    public Optional<ReplicaStatus> replica(String name) {
        return replicaStatus().stream().filter(r -> r.name().equals(name)).findFirst();
    }

    /**
     * The connected replicas, as PostgreSQL's {@code pg_stat_replication}: positions, lags and sync state. For
     * {@code FIRST n}, the n highest-priority streaming replicas are {@code sync} and the other named ones
     * {@code potential}; for {@code ANY n}, every streaming named replica is {@code quorum}.
     */
    public List<ReplicaStatus> replicaStatus() {
        return ReplicaStatus.of(replicas, logs.policy());
    }

    /** As {@link #replicaStatus()}, for log {@code log}; empty for a log not served. */
    public List<ReplicaStatus> replicaStatus(String log) {
        LogEndpoint l = logs.get(log);
        return l == null ? List.of() : ReplicaStatus.of(l.replicas, logs.policyOf(log));
    }

    /**
     * Drops the slots of a replica that is not connected (it is gone for good), on every log: truncation no longer keeps
     * what it needed, and its place counts no more against {@code maxReplicas}.
     *
     * @return false when there was no such slot
     * @throws IllegalStateException when that replica is connected now
     */
    public boolean dropSlot(String name) {
        List<LogEndpoint> all = logs.all();
        if (all.stream().anyMatch(log -> log.replicas.containsKey(name))) {
            throw new IllegalStateException("replica '" + name + "' is connected: stop it before dropping its slot");
        }
        boolean dropped = false;
        for (LogEndpoint log : all) {
            dropped |= log.slots.drop(name);
        }
        if (dropped) {
            LOG.info("Dropped the replication slot of '{}'", name);
        }
        return dropped;
    }

    /**
     * Drops replica {@code name}'s slot on log {@code log} alone (a cluster moved that log's copy off the replica's
     * server, which still follows other logs here): truncation of that log no longer keeps what it needed.
     *
     * @return false when there was no such slot, or no such log served
     * @throws IllegalStateException when that replica follows that log now
     */
    public boolean dropSlot(String log, String name) {
        LogEndpoint l = logs.get(log);
        if (l == null) {
            return false;
        }
        if (l.replicas.containsKey(name)) {
            throw new IllegalStateException("replica '" + name + "' follows log " + log + ": its slot stays");
        }
        boolean dropped = l.slots.drop(name);
        if (dropped) {
            LOG.info("Dropped the replication slot of '{}' on log {}", name, log);
        }
        return dropped;
    }

    /**
     * Stops accepting and streaming and saves the slots; shuts an own event-loop group down, closes only its channels
     * on a shared one ({@link Builder#eventLoops}). Commits waiting for the replicas fail with
     * {@link io.walden.core.RemoteCommitUnconfirmedException} (durable locally, not confirmed), as do later ones
     * at a remote level while the policy stands: no replica can confirm them now. Close it before the log.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        slotSaver.cancel(false);
        channels.close(); // the listener, then every connection, seen closed by its handler; an own group shut down
        senders.close(2, TimeUnit.SECONDS); // every stream's sender was stopped as its connection closed
        // Every log's last slot positions, after every status was taken; the policy stands: waiting commits fail as
        // unconfirmed, never released as LOCAL.
        logs.close();
    }
}
