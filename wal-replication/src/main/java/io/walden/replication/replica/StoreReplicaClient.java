package io.walden.replication.replica;

import io.netty.channel.ChannelHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateHandler;
import io.walden.core.Epoch;
import io.walden.core.Wal;
import io.walden.core.archive.ArchiveTarget;
import io.walden.core.internal.thread.LoopGroup;
import io.walden.replication.protocol.FrameDecoder;
import io.walden.replication.protocol.FrameDescriptor;
import io.walden.replication.protocol.FrameEncoder;
import io.walden.replication.protocol.ProtocolErrorHandler;
import io.walden.replication.transport.EventLoops;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A replica of every log of its primary over one connection (protocol version 6, docs/replication-protocol.md,
 * "Version 6"): the root log as {@code default}, and the named logs of {@link ReplicaLogs}, made the primary's set
 * ({@link StoreCatalog}) and each followed as a version 5 replica follows its one log ({@link LogFollower}): written,
 * flushed and reported per log, so that the primary releases each log's commits by that log's reports. Reconnects with
 * backoff. While it runs, local appends to every log are refused.
 *
 * <p>Threads: a Netty event loop for the connection ({@link Builder#eventLoops}), a catalog thread, and
 * {@link #RECEIVER_THREADS} receiver threads ({@code walden-receivers-1} ...) that every log's {@link LogReceiver} runs
 * on, however many logs there are (a log's fetch of its archived segments, {@link Builder#restoreFrom}, runs there too,
 * between its frames). Thread-safety: {@link #close()} from any thread but those.
 */
public final class StoreReplicaClient implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StoreReplicaClient.class);
    /**
     * The threads every log's receiver runs on: as many as the cores (what a store's writers have), so that logs
     * receiving at once write and force in parallel; at least four, so that a log whose force or settings change is slow
     * leaves threads to the others; at most eight: forces wait on the disk, which more threads do not make faster.
     * Never one per log: a replica of a thousand logs, mostly idle, needs a few.
     */
    static final int RECEIVER_THREADS = Math.min(8, Math.max(4, Runtime.getRuntime().availableProcessors()));

    private final InetSocketAddress primary;
    private final EventLoops loops;
    private final StoreCatalog catalog;
    private final LoopGroup receivers = new LoopGroup("walden-receivers", RECEIVER_THREADS);
    private final FrameEncoder encoder = new FrameEncoder();
    private final Reconnecting connections;
    private final ScheduledFuture<?> statusTask;
    private volatile boolean running = true;
    /** The archive the logs fetch from ({@code restore-from}), closed with this client; null for none. */
    private final ArchiveTarget archive;

    private StoreReplicaClient(Builder b) {
        this.primary = b.primary;
        this.loops = b.loops == null ? EventLoops.ownNio() : b.loops;
        String refusal = "this log is a replica of the primary at " + (b.primaryHttp != null ? b.primaryHttp
                + " (its HTTP address): write there" : primary.getHostString() + ":" + primary.getPort()
                + " (its replication address): write to the primary");
        this.archive = b.archive;
        this.catalog = new StoreCatalog(b.logs, b.chosen, primary, b.name, b.secret == null ? new byte[0]
                : b.secret.getBytes(StandardCharsets.UTF_8), refusal, log -> b.archive == null ? null
                : FrameDescriptor.DEFAULT_LOG.equals(log) ? b.archive : b.archive.under(b.archivePrefix.apply(log)),
                receivers);
        this.connections = new Reconnecting(loops, primary, b.tls, () -> {
            FrameDecoder decoder = new FrameDecoder(FrameDescriptor.HANDSHAKE_MAX_FRAME_LENGTH); // raised per log listed
            return new ChannelHandler[] {new IdleStateHandler(ReceiverHandler.IDLE_SECONDS, 0, 0),
                    decoder, encoder, new StoreReceiverHandler(catalog, decoder), new ProtocolErrorHandler()};
        }, message -> catalog.lastError = message, () -> catalog.fatal == null);
        catalog.onLogsChanged = b.onLogsChanged;
        catalog.onVerified = connections::reached;
        catalog.onDisconnected = connections::retryLater;
        this.statusTask = loops.group().scheduleAtFixedRate(catalog::status, b.statusIntervalMillis, b.statusIntervalMillis,
                TimeUnit.MILLISECONDS);
        connections.connect();
    }

    /** A replica of every log of the primary at {@code primary}, named {@code name} (its name in the sync policy). */
    public static Builder builder(ReplicaLogs logs, InetSocketAddress primary, String name) {
        return new Builder(logs, primary, name);
    }

    /** Options of a replica; by default plaintext, no secret, status every 10 s. */
    public static final class Builder {
        private final ReplicaLogs logs;
        private final InetSocketAddress primary;
        private final String name;
        private String secret;
        private SslContext tls;
        private long statusIntervalMillis = 10_000;
        private EventLoops loops;
        private String primaryHttp;
        private Runnable onLogsChanged = () -> { };
        private ArchiveTarget archive;
        private Function<String, String> archivePrefix;
        private Set<String> chosen;

        private Builder(ReplicaLogs logs, InetSocketAddress primary, String name) {
            this.logs = logs;
            this.primary = primary;
            this.name = name;
        }

        /** The shared secret the primary requires; null for none. */
        public Builder secret(String secret) {
            this.secret = secret;
            return this;
        }

        /** TLS to the primary; null for plaintext. */
        public Builder tls(SslContext context) {
            this.tls = context;
            return this;
        }

        /** Where applications reach the primary's HTTP API, named in the refusal of local appends; null if unknown. */
        public Builder primaryHttp(String address) {
            this.primaryHttp = address;
            return this;
        }

        /** How often every log reports its positions when nothing else prompts it. */
        public Builder statusIntervalMillis(long millis) {
            if (millis <= 0) {
                throw new IllegalArgumentException("the status interval must be positive");
            }
            this.statusIntervalMillis = millis;
            return this;
        }

        /** The event loops to connect on; default (null): a NIO group of one thread of its own, shut down by close. */
        public Builder eventLoops(EventLoops loops) {
            this.loops = loops;
            return this;
        }

        /**
         * Run after this replica created or deleted a log to match its primary, on the catalog thread: a cascading
         * endpoint on these logs passes its {@code ReplicationServer::refreshLogs}, so that its own replicas follow.
         */
        public Builder onLogsChanged(Runnable listener) {
            this.onLogsChanged = listener == null ? () -> { } : listener;
            return this;
        }

        /**
         * PostgreSQL's {@code restore_command} for every log: when the primary says that it no longer keeps a log's end,
         * the log fetches the archived segments from there on (each record checked as if streamed), then streams again.
         * The log {@code default} archives at {@code archive} itself, a named log under {@code prefixOf.apply(name)} of it
         * (a sub-prefix such as {@code logs/orders/}: where the primary archives that log). Closed with this client.
         */
        public Builder restoreFrom(ArchiveTarget archive, Function<String, String> prefixOf) {
            this.archive = archive;
            this.archivePrefix = prefixOf;
            return this;
        }

        /**
         * A replica of the named logs {@code logs} only, not of every log of the primary (docs/replication-protocol.md,
         * "A replica of chosen logs"), changed while it runs by {@link #follow} and {@link #unfollow}: a server of a
         * cluster follows from each other server the logs whose primary that one is. Neither the primary's
         * {@code default} nor any log not chosen is touched, and nothing is ever deleted or replaced here.
         */
        public Builder only(Collection<String> logs) {
            this.chosen = new TreeSet<>(logs);
            return this;
        }

        /** Refuses local appends on every log followed and starts connecting (in the background, with backoff). */
        public StoreReplicaClient start() {
            return new StoreReplicaClient(this);
        }
    }

    /** The logs this replica follows now, {@code default} included, by name. */
    public Set<String> logs() {
        return new TreeSet<>(catalog.followers().keySet());
    }

    /** Whether log {@code log}'s stream is taken on the current connection (its Welcome adopted). */
    public boolean isStreaming(String log) {
        LogFollower f = catalog.followers().get(log);
        return f != null && f.isStreaming();
    }

    /** Why the primary refused this replica for good (another server, a version it does not speak, a bad secret), or null. */
    public String fatalError() {
        return catalog.fatal;
    }

    /** Why the primary refused log {@code log} for good (a diverged history, a removed LSN), or null. */
    public String fatalError(String log) {
        LogFollower f = catalog.followers().get(log);
        return f == null ? null : f.fatal;
    }

    /** Why the last connection attempt or connection failed, or null. */
    public String lastError() {
        return catalog.lastError;
    }

    /** Whether a connection to the primary is open (it may still be in its handshake). */
    public boolean isConnected() {
        return catalog.isConnected();
    }

    /** The end of the last record of log {@code log} readers here may see (its applied position), or -1 for no such log. */
    public long appliedLsn(String log) {
        LogFollower f = catalog.followers().get(log);
        return f == null ? -1 : f.session.applier.applied();
    }

    /** Bytes fetched from the archive since this replica started, over every log ({@link Builder#restoreFrom}). */
    public long archiveBytes() {
        return catalog.followers().values().stream().mapToLong(LogFollower::archiveBytes).sum();
    }

    /** How many times this replica rewound one of its logs since it started following (docs/replication.md). */
    public long rewinds() {
        return catalog.followers().values().stream().mapToLong(f -> f.session.rewinds).sum();
    }

        /** The primary this replica follows. */
    public InetSocketAddress primary() {
        return primary;
    }

    /**
     * Follows named log {@code log} too (a replica of chosen logs, {@link Builder#only}): started at once if the primary
     * listed it (created here as a copy of the primary's if it is not held), else when the primary lists it; it refuses
     * local appends from now on.
     *
     * @throws IllegalStateException when this replica follows every log, or is closed
     */
    public void follow(String log) {
        catalog.choose(log);
    }

    /**
     * Stops following named log {@code log} (a replica of chosen logs): the primary ends its stream (its slot stays), and
     * what was received is written and forced first. The log stays open here and keeps refusing appends, for the caller
     * to promote ({@link #promote(String, int)}), delete, or follow again.
     *
     * @return whether its receiver stopped within a minute (false: a flush is stuck, see the log)
     * @throws IllegalStateException when this replica follows every log, or is closed
     */
    public boolean unfollow(String log) {
        return catalog.release(log);
    }

    /**
     * Makes named log {@code log} a primary's (a replica of chosen logs): stops following it ({@link #unfollow}), then
     * begins its next epoch, numbered at least {@code atLeastNumber} (0: the next one), and it accepts appends. The other
     * logs go on streaming.
     *
     * @throws IllegalArgumentException when the log is not held here
     * @throws IllegalStateException    when this replica follows every log, or its receiver could not be stopped (the
     *                                  log keeps refusing appends; retry)
     */
    public Epoch promote(String log, int atLeastNumber) {
        if (!unfollow(log)) {
            throw new IllegalStateException("cannot promote log " + log + ": its receiver is still applying (see the log)");
        }
        Wal wal = catalog.heldLog(log).orElseThrow(() -> new IllegalArgumentException("no log " + log + " here"));
        Epoch epoch = wal.replication().promote(atLeastNumber);
        LOG.info("Promoted log {}: no longer a replica of {}, a primary in epoch {}", log, primary, epoch);
        return epoch;
    }

    /**
     * Makes every log a primary's, together (a replica group fails over all its logs at once): stops streaming, applies
     * and flushes what each log received, then begins each log's next epoch, numbered at least {@code atLeastNumber}
     * (0: the next one), and accepts appends. The logs stay open (the caller owns them); serve them with a
     * {@code ReplicationServer} and its store.
     *
     * @return each log's new epoch, by name
     * @throws IllegalStateException when this client was closed or promoted, or a receiver could not be stopped (appends
     *                               stay refused; retry)
     */
    public synchronized Map<String, Epoch> promote(int atLeastNumber) {
        if (!running) {
            throw new IllegalStateException("this replica client is closed or promoted");
        }
        Map<String, LogFollower> followed = new TreeMap<>(catalog.followers());
        if (!stop(false)) {
            throw new IllegalStateException("cannot promote: a receiver is still applying (see the log); the logs keep "
                    + "refusing appends");
        }
        Map<String, Epoch> epochs = new TreeMap<>();
        followed.forEach((name, f) -> epochs.put(name, f.wal.replication().promote(atLeastNumber)));
        LOG.info("Promoted: the replica of {} is now a primary of {} log(s) in epochs {}", primary, epochs.size(), epochs);
        return epochs;
    }

    /** Disconnects and stops reconnecting; the logs stay open (the caller owns them) and keep refusing appends. */
    @Override
    public synchronized void close() {
        if (running) {
            stop(true);
        }
    }

    private boolean stop(boolean dropQueued) {
        running = false;
        statusTask.cancel(false);
        connections.stop(null);
        boolean stopped = catalog.close(dropQueued);
        receivers.close(2, TimeUnit.SECONDS); // every log's receiver ended (or is stuck, and was reported)
        loops.shutdownIfOwned(2).awaitUninterruptibly();
        if (archive != null) {
            archive.close();
        }
        return stopped;
    }
}
