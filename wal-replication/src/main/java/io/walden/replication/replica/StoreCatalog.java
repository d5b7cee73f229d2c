package io.walden.replication.replica;

import io.netty.channel.Channel;
import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.core.archive.ArchiveTarget;
import io.walden.core.internal.thread.LoopGroup;
import io.walden.core.internal.thread.WaldenThreads;
import io.walden.replication.protocol.Frame;
import io.walden.replication.protocol.FrameDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A version 6 replica's set of logs made the primary's (docs/replication-protocol.md, "Version 6", "A replica catches
 * up to exactly the primary's set"): a {@link LogFollower} per log, each refusing local appends; logs the catalog lists
 * and this replica lacks created as copies of the primary's (after asking for their identity); logs it holds under a
 * listed name but of another log id replaced; logs it holds of the listed log id kept, with the settings the entry
 * tells (again at every connection, and whenever they change there); and named logs deleted only when the primary says
 * so: a drop, or a complete catalog that did not list them. Nothing of a connection whose {@code default} is not this
 * replica's root log is touched.
 *
 * <p>A replica of <em>chosen</em> logs (docs/replication-protocol.md, "A replica of chosen logs") follows only the named
 * logs it is told to, changed while it runs ({@link #choose}, {@link #release}): it neither checks nor follows the
 * primary's {@code default} (each server's root log is its own), and never deletes or replaces a log, whatever the
 * catalog says: the set is its caller's (a cluster's placement), and a log whose log id is not the primary's is refused
 * for good instead. Logs it does not follow it leaves alone, open and writable.
 *
 * <p>Threads: creations, deletions and starts run on one catalog thread ({@code walden-catalog}), in the order the
 * catalog's frames came; a stale connection's work is skipped. A log's settings are applied by its own receiver,
 * between two of its frames ({@link LogFollower#settle}). Thread-safety: every method from any thread.
 */
final class StoreCatalog {
    private static final Logger LOG = LoggerFactory.getLogger(StoreCatalog.class);

    private final ReplicaLogs logs;
    private final InetSocketAddress primary;
    private final String name;
    private final byte[] secret;
    private final String refusal;
    /** Each log's archive, to fetch what the primary no longer keeps ({@code restore-from}); null for none. */
    private final Function<String, ArchiveTarget> archives;
    private final LoopGroup receivers;
    private final Map<String, LogFollower> followers = new ConcurrentHashMap<>();
    /** The named logs followed, for a replica of chosen logs; null: every log of the primary. */
    private final Set<String> chosen;
    /**
     * The named logs the connection {@link #listing} listed, by name, with its bytes in flight (catalog thread): a log
     * chosen later is started from here without asking the primary for its catalog again.
     */
    private final Map<String, StoreReceiverHandler.Numbered> listed = new HashMap<>();
    private Channel listing;
    private PendingBytes listingPending;
    private final ExecutorService worker = Executors.newSingleThreadExecutor(WaldenThreads.named("walden-catalog"));
    /** The current connection, and the one whose {@code default} was found to be this replica's root log. */
    private volatile Channel channel;
    private volatile Channel verified;
    volatile String fatal;
    volatile String lastError;
    /** Run when a connection's {@code default} is found to be this replica's root log: it reached the right primary. */
    volatile Runnable onVerified = () -> { };
    /**
     * Run after a log was created or deleted here (on the catalog thread) or reopened with new settings (on its receiver
     * thread): a cascading endpoint refreshes its logs.
     */
    volatile Runnable onLogsChanged = () -> { };
    /** Run when a connection ends: connect again later. */
    volatile Runnable onDisconnected = () -> { };

    /**
     * Follows every log {@code logs} holds now: each refuses local appends from here on, with {@code refusal}; each log's
     * receiver runs on {@code receivers}.
     */
    StoreCatalog(ReplicaLogs logs, Set<String> chosen, InetSocketAddress primary, String name, byte[] secret,
                 String refusal, Function<String, ArchiveTarget> archives, LoopGroup receivers) {
        this.logs = logs;
        this.chosen = chosen == null ? null : ConcurrentHashMap.newKeySet();
        this.archives = archives;
        this.primary = primary;
        this.name = name;
        this.secret = secret;
        this.refusal = refusal;
        this.receivers = receivers;
        if (chosen == null) {
            follow(FrameDescriptor.DEFAULT_LOG, logs.root());
        } else {
            chosen.forEach(this::requireNamed);
            this.chosen.addAll(chosen);
        }
        for (String log : logs.names()) {
            if (isFollowed(log)) {
                logs.log(log).ifPresent(wal -> follow(log, wal));
            }
        }
    }

    private boolean isFollowed(String log) {
        return chosen == null || chosen.contains(log);
    }

    private void requireNamed(String log) {
        if (log.equals(FrameDescriptor.DEFAULT_LOG)) {
            throw new IllegalArgumentException("a replica of chosen logs follows named logs only: default is each server's own");
        }
    }

    private LogFollower follow(String log, Wal wal) {
        wal.replication().refuseAppends(refusal);
        LogFollower f = new LogFollower(log, wal, primary, name, archives.apply(log), receivers);
        followers.put(log, f);
        return f;
    }

    String replicaName() {
        return name;
    }

    byte[] secret() {
        return secret;
    }

    InetSocketAddress primary() {
        return primary;
    }

    /** The logs followed now, by name. */
    Map<String, LogFollower> followers() {
        return followers;
    }

    /** Named log {@code log} as held here now, followed or not. */
    Optional<Wal> heldLog(String log) {
        return logs.log(log);
    }

    boolean isConnected() {
        Channel c = channel;
        return c != null && c.isActive();
    }

        void connected(Channel ch) {
        channel = ch;
    }

    void disconnected(Channel ch) {
        if (channel == ch) {
            channel = null;
        }
        onDisconnected.run();
    }

    /** A log the catalog lists: started if this replica holds it, replaced if it holds another log of that name, else created. */
    void listed(Channel ch, StoreReceiverHandler.Numbered n, PendingBytes pending) {
        onWorker(ch, () -> {
            Frame.CatalogEntry entry = n.entry;
            if (entry.name().equals(FrameDescriptor.DEFAULT_LOG) && chosen != null) {
                verified = ch; // its default is the primary's own: a replica of chosen logs checks each log's id instead
                onVerified.run();
                return;
            }
            if (entry.name().equals(FrameDescriptor.DEFAULT_LOG)) {
                if (entry.logId() != logs.root().status().logId()) {
                    fatal = "the primary's log default is " + Long.toHexString(entry.logId()) + ", not this replica's "
                            + Long.toHexString(logs.root().status().logId()) + ": a replica of another server";
                    LOG.error("Refusing to follow the primary at {}: {}", primary, fatal);
                    ch.close();
                    return;
                }
                verified = ch;
                onVerified.run();
                attach(ch, n, followers.get(FrameDescriptor.DEFAULT_LOG), pending);
                return;
            }
            if (verified != ch) {
                return;
            }
            if (listing != ch) {
                listed.clear();
                listing = ch;
                listingPending = pending;
            }
            listed.put(entry.name(), n);
            if (isFollowed(entry.name())) {
                startListed(ch, n, pending);
            }
        });
    }

    /** Starts a followed named log the connection listed (catalog thread): replaced or created first if need be. */
    private void startListed(Channel ch, StoreReceiverHandler.Numbered n, PendingBytes pending) {
        Frame.CatalogEntry entry = n.entry;
        LogFollower f = followers.get(entry.name());
        if (f == null && logs.log(entry.name()).isPresent()) {
            f = follow(entry.name(), logs.log(entry.name()).get());
        }
        if (f != null && (f.logId != entry.logId() || f.segmentSize != entry.segmentSize())) {
            if (chosen != null) { // never replaced here: what is deleted is the caller's decision
                f.fatal = "log " + entry.name() + " here is " + Long.toHexString(f.logId) + ", the primary's is "
                        + Long.toHexString(entry.logId()) + ": another log of that name; delete it here to follow the primary's";
                LOG.error("Not following log {}: {}", entry.name(), f.fatal);
                return;
            }
            LOG.warn("Log {} here is {}, the primary's is {}: it was deleted and created again there; replacing it",
                    entry.name(), Long.toHexString(f.logId), Long.toHexString(entry.logId()));
            remove(entry.name());
            f = null;
        }
        if (f == null) {
            // On the event loop, which routes the answer: a copy followed on this connection before (let go, then
            // deleted) left its stream in n, and the answer would go to that stream, never creating the log here.
            ch.eventLoop().execute(() -> {
                n.stream = null;
                n.identity = null;
                askIdentity(ch, n);
            });
            return;
        }
        settle(f, entry); // before its start: the start names where the log, reopened or not, ends
        attach(ch, n, f, pending);
    }

    private static void attach(Channel ch, StoreReceiverHandler.Numbered n, LogFollower f, PendingBytes pending) {
        n.follower = f; // before the stream: the event loop reads the stream, then the follower
        LogFollower.Stream stream = f.attach(ch, n.entry.log(), pending);
        n.stream = stream; // before the Start: its answer is routed by this
        f.start(stream);
    }

    /** Asks the primary who log {@code n} is (a Start with log id 0), for a log this replica lacks. */
    static void askIdentity(Channel ch, StoreReceiverHandler.Numbered n) {
        ch.writeAndFlush(new Frame.OnLog(n.entry.log(), new Frame.Start(0, 1, 0, Lsn.FIRST)));
    }

    /** The answer to the identity question: creates the log as a copy of the primary's, then starts it. */
    void create(Channel ch, StoreReceiverHandler.Numbered n, Frame.Welcome w, PendingBytes pending) {
        onWorker(ch, () -> {
            if (verified != ch || w.logId() != n.entry.logId() || !isFollowed(n.entry.name())
                    || followers.containsKey(n.entry.name())) {
                return; // let go meanwhile, or already created by an earlier answer
            }
            String log = n.entry.name();
            Wal wal = logs.create(log, new PrimaryIdentity(w.logId(), w.segmentSize(), w.oldestLsn(), w.history()),
                    n.entry.settings());
            LOG.info("Created log {} as a copy of the primary's ({})", log, Long.toHexString(w.logId()));
            attach(ch, n, follow(log, wal), pending);
            logsChanged();
        });
    }

    /**
     * The primary changed a named log's settings (an entry again, of the same log id): the copy takes them, and is kept.
     * The root log keeps this replica's own settings.
     */
    void changed(Frame.CatalogEntry entry) {
        onWorker(channel, () -> {
            LogFollower f = followers.get(entry.name());
            if (f != null && !entry.name().equals(FrameDescriptor.DEFAULT_LOG)) {
                settle(f, entry);
            }
        });
    }

    /**
     * Gives a log the primary's settings of {@code entry}, between two of its frames; a log reopened for them refuses
     * appends as every log here does, and a cascading endpoint serves it anew.
     */
    private void settle(LogFollower f, Frame.CatalogEntry entry) {
        f.settle(() -> logs.changed(f.name, entry.settings()), () -> logs.log(f.name).orElse(null), wal -> {
            wal.replication().refuseAppends(refusal);
            logsChanged();
        });
    }

    /** The primary deleted log {@code log}. */
    void dropped(Channel ch, String log) {
        onWorker(ch, () -> {
            if (verified != ch) {
                return;
            }
            listed.remove(log);
            if (chosen == null) {
                remove(log);
                return;
            }
            LogFollower f = followers.get(log); // kept here: a replica of chosen logs deletes nothing
            if (f != null) {
                f.stop(false);
                follow(log, f.wal); // in its place: it waits, refusing appends, until a primary lists it again
                LOG.warn("The primary at {} no longer holds log {}: this replica keeps its copy", primary, log);
            }
        });
    }

    /** The catalog listed is complete: a named log this replica holds that it did not list was deleted on the primary. */
    void complete(Channel ch, Set<String> listed) {
        onWorker(ch, () -> {
            if (verified != ch || chosen != null) {
                return; // a replica of chosen logs deletes nothing
            }
            for (String log : new ArrayList<>(logs.names())) {
                if (!listed.contains(log)) {
                    remove(log);
                }
            }
        });
    }

    private void remove(String log) {
        LogFollower f = followers.remove(log);
        if (f != null) {
            f.stop(true);
        }
        if (logs.log(log).isPresent()) {
            logs.delete(log);
            LOG.info("Deleted log {}: the primary at {} deleted it", log, primary);
            logsChanged();
        }
    }

    private void logsChanged() {
        try {
            onLogsChanged.run();
        } catch (RuntimeException e) { // the listener's failure is its own: this replica's logs are the primary's
            LOG.warn("The listener of this replica's logs failed: {}", e.toString());
        }
    }

    /**
     * Follows named log {@code log} too (a replica of chosen logs): started at once if the connection listed it
     * (created as a copy of the primary's if it is not held here), else when the primary lists it; from then on it
     * refuses local appends. Returns once that is done, on the catalog thread.
     */
    void choose(String log) {
        requireChosen();
        requireNamed(log);
        chosen.add(log);
        onWorkerAndWait(() -> {
            if (followers.containsKey(log) || !chosen.contains(log)) {
                return true;
            }
            StoreReceiverHandler.Numbered n = listing != null && listing == channel && listing.isActive()
                    ? listed.get(log) : null;
            if (n != null && verified == listing) {
                startListed(listing, n, listingPending);
            } else {
                logs.log(log).ifPresent(wal -> follow(log, wal));
            }
            return true;
        });
    }

    /**
     * Stops following named log {@code log} (a replica of chosen logs): tells the primary to end its stream, and stops
     * its receiver after it wrote and forced what it received. The log stays here, open and still refusing appends: the
     * caller decides what becomes of it (a promotion, a deletion, a later {@link #choose}).
     *
     * @return whether its receiver stopped within the wait
     */
    boolean release(String log) {
        requireChosen();
        chosen.remove(log);
        return onWorkerAndWait(() -> {
            LogFollower f = followers.remove(log);
            if (f == null) {
                return true;
            }
            f.end();
            return f.stop(false);
        });
    }

    private void requireChosen() {
        if (chosen == null) {
            throw new IllegalStateException("this replica follows every log of its primary, not chosen ones");
        }
    }

    /** Runs {@code task} on the catalog thread, whatever the connection, and waits for its answer. */
    private boolean onWorkerAndWait(Callable<Boolean> task) {
        try {
            return worker.submit(task).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the replica's catalog changed", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not change the replica's chosen logs: " + e.getCause(), e.getCause());
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("this replica client is closed", e);
        }
    }

    /** The primary refused the connection: final codes stop the replica. */
    void refused(Frame.Error error) {
        if (error.isFinal()) {
            fatal = error.code() == Frame.Error.UNSUPPORTED_VERSION
                    ? error.message() + " (this replica speaks protocol version 6: upgrade the primary first)"
                    : error.message();
        }
        lastError = error.message();
        LOG.error("The primary at {} refused this replica: {}", primary, error.message());
    }

    /** Reports every log's position (the status interval). */
    void status() {
        followers.values().forEach(LogFollower::status);
    }

    private void onWorker(Channel ch, Runnable task) {
        try {
            worker.execute(() -> {
                if (ch == null || ch != channel || !ch.isActive()) {
                    return; // a stale connection's catalog: the next one lists it again
                }
                try {
                    task.run();
                } catch (RuntimeException e) {
                    lastError = e.toString();
                    LOG.error("Could not make this replica's logs the primary's: {}; reconnecting", e.toString(), e);
                    ch.close();
                }
            });
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    /**
     * Stops the catalog thread and every log's receiver, which drops what is queued or, for a promotion, applies it; the
     * logs stay open (the caller owns them).
     */
    boolean close(boolean dropQueued) {
        worker.shutdown();
        boolean stopped = true;
        try {
            stopped = worker.awaitTermination(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<LogFollower> all = new ArrayList<>(followers.values());
        for (LogFollower f : all) {
            stopped &= f.stop(dropQueued);
        }
        return stopped;
    }
}
