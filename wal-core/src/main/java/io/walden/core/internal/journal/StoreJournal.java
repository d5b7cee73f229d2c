package io.walden.core.internal.journal;

import io.walden.core.Durability;
import io.walden.core.WalConfig;
import io.walden.core.internal.ClaimSlot;
import io.walden.core.internal.LogPositions;
import io.walden.core.internal.WritePath;
import io.walden.core.internal.commit.Completion;
import io.walden.core.internal.commit.WalBuffers;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.thread.BackgroundThreads;
import io.walden.core.internal.thread.Loop;
import io.walden.core.internal.thread.LoopRunner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * The store's journal: one log, of the store's own, that the durable bytes of all its logs go through, so that commits
 * to different logs share one {@code fdatasync} (PostgreSQL's one WAL for all its tables; BookKeeper's journal for
 * all its ledgers). docs/group-commit.md, "Flushes across logs", has the measurements that chose it; the entries'
 * format is in docs/format.md, "The store journal".
 *
 * <p>How a log's commit becomes durable: its flush leader writes its records into its own segment file, then hands the
 * same bytes to {@link #write} (through its {@link LogJournal}), which appends them to the journal and waits for the
 * journal's group commit. The journal is a {@link Wal} like any other, so its flush is the same lock-free group
 * commit: 64 logs with one committer each make one flush of the journal, as 64 committers of one log make one of it.
 *
 * <p>Checkpoint (PostgreSQL's): every {@link #CHECKPOINT_PERIOD}, or sooner once the journal holds two of its
 * segments, the journal's flushed position {@code J} is sampled, every log forces the segment files
 * it wrote through the journal since the last checkpoint, and the journal's segments below {@code J} are removed.
 * Every entry below {@code J} covered bytes written into a file that is now forced. A failed force is never retried:
 * the journal stops removing anything, and the log whose force failed fails at its next flush; what the journal holds
 * is written back at the next open.
 *
 * <p>Recovery: before any log of the store opens, {@link JournalReplay} writes every entry the journal still holds into
 * its log's segment file, then forces them; a log then opens and recovers as it always did.
 *
 * <p>Thread-safety: {@link #write} and {@link #discard} from any thread (the logs' flush leaders); the checkpoint on
 * its runner's thread, or on the closer's once the runner stopped.
 */
public final class StoreJournal implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StoreJournal.class);
    /** The journal's directory in the store's. */
    public static final String DIRECTORY = "journal";
    /** The file in each store log's directory holding its key in the journal (8 bytes, little-endian). */
    public static final String KEY_FILE = "walden.store-key";
    /** The journal's segment size, unless a test asks for smaller ones. */
    public static final long SEGMENT_SIZE = 16L << 20;
    /** Entry types (docs/format.md, "The store journal"). */
    public static final int WRITE = 1;
    public static final int DISCARD = 2;
    /** An entry's header: the log's key, then the LSN its bytes start at (u64 each). */
    public static final int HEADER = 16;
    /** Largest run of a log's bytes in one entry: a flush of more is split, each part a write of its own. */
    static final int MAX_RUN = 1 << 20;
    static final Duration CHECKPOINT_PERIOD = Duration.ofSeconds(1);

    /** The journal log's write path: each entry is a claim on it; each flush leader waits for its own entries. */
    private final WritePath journal;
    /** The journal log's positions: where a checkpoint may remove up to, and what the journal holds. */
    private final LogPositions positions;
    /** How many times the journal log was forced. */
    private final LongSupplier flushCount;
    /** The journal log's truncation ({@code Wal#truncateBefore}): a checkpoint's removal. */
    private final LongConsumer truncateBefore;
    /** The sync method the journal forces with, as the logs' descriptions name it. */
    private final String syncName;
    /** A checkpoint is due early once the journal holds this much since the last (two of its segments). */
    private final long checkpointBytes;
    /** The longest run of bytes in one entry: {@link #MAX_RUN}, or less where the journal's records must be smaller. */
    private final int maxRun;
    private final Map<Long, LogJournal> logs = new ConcurrentHashMap<>();
    /** Each flush leader's claim on the journal (claimed and finished on one thread, in one call). */
    private final ThreadLocal<ClaimSlot> claims = ThreadLocal.withInitial(ClaimSlot::new);
    /** Each event loop's force of the journal ({@link #forceSoon}). */
    private final LoopForces loopForces;
    /** The journal's force for callers with no loop ({@link #forceSoon forceSoon(null)}). */
    private final RequestedForces requestedForces;
    private final LoopRunner checkpoints;
    /** The journal's flushed position at the last checkpoint. Checkpoint thread only. */
    private long checkpointed;
    /** Set once a checkpoint's force failed: nothing is removed from the journal again. */
    private volatile IOException stuck;

    /**
     * The journal's log is opened (and {@link JournalReplay replayed} into the store's logs) by the store, which closes it
     * after {@link #close}; this is given its parts.
     *
     * @param journal        the journal's write path
     * @param positions      the journal's positions
     * @param flushCount     how many times the journal was forced
     * @param truncateBefore the journal's truncation (Wal#truncateBefore)
     * @param config         the journal's settings
     */
    public StoreJournal(WritePath journal, LogPositions positions, LongSupplier flushCount, LongConsumer truncateBefore,
                        WalConfig config, BackgroundThreads threads) {
        this.journal = journal;
        this.loopForces = new LoopForces(journal);
        this.requestedForces = new RequestedForces(journal, threads);
        this.positions = positions;
        this.flushCount = flushCount;
        this.truncateBefore = truncateBefore;
        this.syncName = config.syncMethod().name().toLowerCase(java.util.Locale.ROOT);
        this.checkpointBytes = 2 * config.segmentSize();
        this.maxRun = Math.min(MAX_RUN, config.maxPayloadSize() - HEADER);
        this.checkpointed = positions.flushedLsn();
        this.checkpoints = threads.runner(BackgroundThreads.Job.CHECKPOINT, new Loop() {
            @Override
            public long doWork() throws IOException {
                checkpoint();
                return CHECKPOINT_PERIOD.toNanos();
            }

            @Override
            public long onError(Throwable failure) {
                LOG.error("The store journal's checkpoint failed; the journal keeps every entry from now on: {}",
                        failure.toString(), failure);
                return failure instanceof Error ? STOP : CHECKPOINT_PERIOD.toNanos();
            }
        });
        checkpoints.start();
    }

    /** The way log {@code key} in {@code dir} makes its bytes durable: through this journal. */
    public LogJournal logJournal(long key, Path dir) {
        return logs.computeIfAbsent(key, k -> new LogJournal(this, k, dir));
    }

    /**
     * Appends {@code length} bytes of {@code from} (a view of a segment's mapping, from {@code offset}: bytes of log
     * {@code key} from {@code lsn} on, already written into its file) to the journal, without waiting for its force.
     *
     * @return the LSN of the last entry written: once the journal is flushed past it, the bytes are durable
     */
    long submit(long key, long lsn, ByteBuffer from, long offset, long length) {
        ClaimSlot claim = claims.get();
        long last = -1;
        for (long done = 0; done < length; ) {
            int n = (int) Math.min(maxRun, length - done);
            last = entry(claim, WRITE, key, lsn + done, n);
            try {
                claim.ring().write(claim.payloadOffset() + HEADER, from, (int) (offset + done), n);
            } catch (Throwable e) {
                // A fault reading the segment's mapping: the reserved entry still gets published (as padding that
                // replay never reads), or every later commit of every log would wait for it forever.
                claim.finish(RecordDescriptor.FLAG_PADDING, Durability.OFF);
                throw e;
            }
            // No wait and no nudge of the journal's writer: the caller forces (or waits for) the journal next.
            claim.finish(0, null);
            done += n;
        }
        if (last - checkpointed > checkpointBytes) {
            checkpoints.wake(); // a racy read of a checkpoint-thread field: at worst one wake-up early or late
        }
        return last;
    }

    /** Waits until the journal holds the entry at {@code ticket} (and every one before it) durably. */
    void awaitDurable(long ticket) {
        journal.awaitDurable(ticket, Durability.LOCAL);
    }

    /**
     * Tells {@code completion} once the journal holds the entry at {@code ticket} durably, on the thread that forced
     * it; someone must force it ({@link #forceSoon}).
     */
    void whenDurable(Completion completion, long ticket) {
        journal.whenFlushed(completion, ticket);
    }

    /**
     * Forces the journal on the event loop {@code loop}, after the tasks queued on it now ({@link LoopForces}); or, for
     * a caller with no loop (null), on the journal's force thread ({@link RequestedForces}): its force covers what every
     * log submitted before it began, and those that submit while it forces share the next.
     */
    void forceSoon(ScheduledExecutorService loop) {
        if (loop == null) {
            requestedForces.request();
        } else {
            loopForces.queue(loop);
        }
    }

    /** A durable entry saying that log {@code key}'s earlier entries hold nothing from {@code lsn} on. */
    void discard(long key, long lsn) {
        ClaimSlot claim = claims.get();
        entry(claim, DISCARD, key, lsn, 0);
        claim.finish(0, Durability.LOCAL);
    }

    /** Claims a journal record of {@code type} with {@code length} bytes after its header, and writes the header. */
    private long entry(ClaimSlot claim, int type, long key, long lsn, int length) {
        journal.claim(type, HEADER + length, claim);
        WalBuffers ring = claim.ring();
        ring.writeLong(claim.payloadOffset(), key);
        ring.writeLong(claim.payloadOffset() + 8, lsn);
        return claim.lsn();
    }

    /** Forgets log {@code key} (deleted): its files are gone, and so is any need to force them. */
    public void forget(long key) {
        logs.remove(key);
    }

    /**
     * Forces the files log {@code key} wrote through the journal since the last checkpoint, now: before a deletion
     * renames its directory away (a checkpoint after the rename would find no file to force and drop its entries,
     * while a crash before the rename is durable brings the log back).
     */
    public void forceFilesOf(long key) throws IOException {
        LogJournal log = logs.get(key);
        if (log != null) {
            log.forceTouched();
        }
    }

    /**
     * Forces what the logs wrote through the journal, then removes the journal's segments that only covered that. On
     * the checkpoint's runner, or by the closer once the runner stopped.
     */
    synchronized void checkpoint() throws IOException {
        if (stuck != null) {
            return;
        }
        long upTo = positions.flushedLsn();
        if (upTo == checkpointed) {
            return;
        }
        for (LogJournal log : logs.values()) {
            try {
                log.forceTouched();
            } catch (IOException | RuntimeException | Error e) {
                IOException failed = e instanceof IOException io ? io : new IOException(e.toString(), e);
                stuck = failed;
                throw new IOException("forcing the files of the log in " + log.directory() + " failed: " + e, e);
            }
        }
        truncateBefore.accept(upTo);
        checkpointed = upTo;
    }

    /** The sync method the journal forces with (for the logs' descriptions). */
    String syncName() {
        return syncName;
    }

    /** How many times the journal was forced: each a flush shared by the commits of every log that flushed meanwhile. */
    public long flushCount() {
        return flushCount.getAsLong();
    }

    /** The journal's bytes not yet removed by a checkpoint. */
    public long heldBytes() {
        return positions.retainedBytes();
    }

    /**
     * After the store's logs closed (each flushed into the journal): a last checkpoint, so that the next open has
     * little to write back. The store closes the journal's log after this.
     */
    @Override
    public void close() {
        requestedForces.stop();
        checkpoints.stop(Duration.ofSeconds(30));
        try {
            checkpoint();
        } catch (IOException | RuntimeException e) {
            LOG.warn("The store journal's last checkpoint failed; its entries are written back at the next open: {}",
                    e.toString());
        }
    }
}
