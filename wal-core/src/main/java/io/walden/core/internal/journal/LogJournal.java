package io.walden.core.internal.journal;

import io.walden.core.internal.commit.Completion;
import io.walden.core.internal.commit.DeferredSync;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.sync.ForceTarget;
import io.walden.core.internal.sync.SyncStrategy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;

/**
 * One store log's way to make its records durable: through the store's {@link StoreJournal} instead of a force of
 * its own file (docs/group-commit.md, "Flushes across logs"). The log's flush leader writes its records into its
 * segment file as always (a {@code pwrite}), then, where it would force that file, calls {@link #force}: the same
 * bytes go into the journal, and the call returns once the journal holds them durably. Commits of many logs thus
 * share one {@code fdatasync} of the journal, the way commits of one log share one of its file.
 *
 * <p>What stays true per log (docs/durability.md): a flushed position only moves once a completed force covered it;
 * here the force is the journal's, and the bytes are in the log's file too (written, maybe not yet forced). The
 * journal's checkpoint forces the log's files ({@link #forceTouched}) before it drops the entries that cover them;
 * after a crash the store's open writes the journal's entries back into the files before any log opens
 * ({@link JournalReplay}).
 *
 * <p>Thread-safety: {@link #force} by the log's flush leader only (one at a time, each seeing the last one's writes
 * through the leader flag); {@link #forceTouched} by the journal's checkpoint; the two meet under this object's lock.
 */
public final class LogJournal implements SyncStrategy, DeferredSync {
    private final StoreJournal journal;
    private final long key;
    private final Path dir;
    /** The segments forced through the journal since the last checkpoint took them: what it must force itself. */
    private List<ForceTarget> touched = new ArrayList<>(2);
    /** A view of the last segment's mapping, kept to copy from without allocating at every flush. */
    private Segment viewed;
    private ByteBuffer view;
    /** A force of this log's files by the checkpoint failed: the log fails at its next flush (never retried). */
    private volatile IOException failedForce;

    LogJournal(StoreJournal journal, long key, Path dir) {
        this.journal = journal;
        this.key = key;
        this.dir = dir;
    }

    /** The log's key in the journal's entries (docs/format.md, "The store journal"). */
    public long key() {
        return key;
    }

    public Path directory() {
        return dir;
    }

    /**
     * Makes {@code [fromOffset, toOffset)} of {@code segment} durable: notes the segment for the checkpoint first (so
     * that a checkpoint that drops this entry forces the file), then writes the bytes, already in the file, into the
     * journal and waits for the journal's flush.
     */
    @Override
    public void force(ForceTarget segment, long fromOffset, long toOffset) throws IOException {
        long ticket = submit(segment, fromOffset, toOffset);
        if (ticket >= 0) {
            journal.awaitDurable(ticket);
        }
    }

    /**
     * {@link #force}'s first half: notes the segment for the checkpoint, then writes the bytes into the journal, and
     * returns the journal's LSN to wait for (-1 for an empty range) instead of waiting.
     */
    @Override
    public long submit(ForceTarget segment, long fromOffset, long toOffset) throws IOException {
        IOException failed = failedForce;
        if (failed != null) {
            throw new IOException("a checkpoint's force of this log's files failed earlier: " + failed.getMessage(), failed);
        }
        if (toOffset <= fromOffset) {
            return -1;
        }
        noteTouched(segment);
        Segment seg = (Segment) segment;
        if (seg != viewed) {
            viewed = seg;
            view = seg.newView();
        }
        return journal.submit(key, seg.startLsn() + fromOffset, view, fromOffset, toOffset - fromOffset);
    }

    @Override
    public void whenDurable(Completion completion, long ticket) {
        journal.whenDurable(completion, ticket);
    }

    @Override
    public void forceSoon(ScheduledExecutorService loop) {
        journal.forceSoon(loop);
    }

    /**
     * Under the lock, so that a checkpoint taking the list either finds the segment in it or leaves a new list this
     * adds it to: an entry the checkpoint drops always had its segment noted before (one uncontended lock per flush).
     */
    private synchronized void noteTouched(ForceTarget segment) {
        if (!touched.contains(segment)) {
            touched.add(segment);
        }
    }

    /**
     * The journal's checkpoint: forces every segment file this log wrote through the journal since the last call.
     * Each entry the journal held before this call began covers bytes of one of them, written to the file before the
     * entry was (see {@link #force}). A segment the log closed since is forced through its path; one removed since
     * needs nothing: the log removes a segment durably (a rename forced with its directory) before its file can go,
     * and a store forces a log's files before its deletion renames them away ({@link StoreJournal#forceFilesOf}). A
     * failed force is never retried: this log fails at its next flush, and the journal keeps every entry from then on
     * (see {@link StoreJournal}).
     *
     * @throws IOException when a force failed
     */
    void forceTouched() throws IOException {
        List<ForceTarget> mine;
        synchronized (this) {
            if (touched.isEmpty()) {
                return;
            }
            mine = touched;
            touched = new ArrayList<>(2);
        }
        for (ForceTarget t : mine) {
            try {
                forceOne((Segment) t);
            } catch (IOException | RuntimeException | Error e) {
                failedForce = e instanceof IOException io ? io : new IOException(e.toString(), e);
                throw e;
            }
        }
    }

    private static void forceOne(Segment seg) throws IOException {
        try {
            seg.force(false);
            return;
        } catch (ClosedChannelException closed) {
            // closed by the log (closed, removed, rewound away): its pages are in the file's page cache all the same
        }
        try (FileChannel ch = FileChannel.open(seg.path(), StandardOpenOption.WRITE)) {
            ch.force(false);
        } catch (NoSuchFileException gone) {
            // removed since: nobody needs its bytes any more
        }
    }

    /**
     * A replica's rewind to {@code lsn} (before its bytes are zeroed): the journal's entries so far must never put
     * back the records from {@code lsn} on. Durable when this returns.
     */
    public void discardFrom(long lsn) {
        journal.discard(key, lsn);
    }

    /** Whether nothing waits for the checkpoint (a closed log can leave the journal's list then). */
    synchronized boolean untouched() {
        return touched.isEmpty();
    }

    @Override
    public String toString() {
        return "store journal (" + journal.syncName() + ")";
    }
}
