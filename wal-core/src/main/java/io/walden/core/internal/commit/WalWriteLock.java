package io.walden.core.internal.commit;

import io.walden.core.WalFailedException;
import io.walden.core.internal.segment.SegmentRegistry;
import io.walden.core.internal.sync.SyncStrategy;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * PostgreSQL's WALWriteLock, without the force: who writes the WAL buffers into the files, and when. The
 * {@link LogWriter} has a single writer; its three kinds of holder take this lock by CAS: the flush leader before its
 * force ({@link #writeForFlush}), the background writer for records nobody waits for ({@link #writeAll}), and an
 * appender that needs room in the ring ({@link #makeRoom}, PostgreSQL's AdvanceXLInsertBuffer). The lock is held only
 * while writing, never across a force, so that the ring is written out while a force is in flight and no appender
 * waits for a force it does not need.
 *
 * <p>Guarantees:
 * <ul>
 *   <li>At most one write at a time ({@code held} is a mutual-exclusion flag taken by CAS).</li>
 *   <li>Nothing is written once the log failed: each holder re-checks the failed state after taking the lock, since a
 *       writer that failed meanwhile leaves the files and the ring disagreeing on what is written.</li>
 *   <li>A write that fails fails the log ({@link LogFailure}): here, or, for the leader's, in its flush.</li>
 * </ul>
 *
 * <p>Thread-safety: every method may be called from any thread, except {@link #writeForFlush} (the flush leader) and
 * {@link #rewindWritten} (the holder of the lock).
 */
public final class WalWriteLock {
    private final Appender appender;
    private final Position published;
    private final LogWriter writer;
    private final LogFailure failure;
    /** Held by whoever writes the WAL buffers into the files (one writer at a time: see LogWriter). */
    private final AtomicInteger held = new AtomicInteger();

    /** @param written the end of what the files hold (moved by the writes here) */
    public WalWriteLock(Appender appender, Position published, Position written, SegmentRegistry registry, SyncStrategy sync,
                 ReadNotifier notifier, LogFailure failure) {
        this.appender = appender;
        this.published = published;
        this.writer = new LogWriter(registry, appender.ring(), written, notifier, sync.writesThrough());
        this.failure = failure;
    }

    /**
     * Whether published records are not in the files yet. Two volatile reads and no scan of the buffers, so that it
     * may be called from outside the log's {@link Activity} (a scan from there could read a buffer being reused).
     */
    public boolean hasUnwritten() {
        return published.get() > writer.writtenLsn();
    }

    /** Whether the record at {@code lsn} is published and not wholly in the files yet (two volatile reads, as above). */
    public boolean isUnwritten(long lsn) {
        return published.get() > lsn && writer.writtenLsn() <= lsn;
    }

    /**
     * Writes every published record into the files without forcing them (the background writer, for records nobody
     * waits for: once written they survive the process's death, if not the machine's). Does nothing when someone
     * else is writing. Failing here fails the log, like a force.
     *
     * @return whether this call wrote (false: another writer was busy, or the log is failed)
     */
    public boolean writeAll() {
        if (failure.failed() || !tryLock()) {
            return false;
        }
        try {
            if (failure.failed()) {
                return false; // a writer failed while this one waited: nothing is ever written again
            }
            writer.writeUpTo(appender.advancePublished());
        } catch (Throwable e) {
            failure.fail("write of the published records failed: " + e, e);
        } finally {
            held.set(0);
        }
        return true;
    }

    /**
     * For an appender that needs room in the WAL buffers: returns once the files hold everything below {@code lsn},
     * writing the published records itself whenever no one else is writing (PostgreSQL's AdvanceXLInsertBuffer).
     * Never forces. Inside the log's {@link Activity}.
     *
     * @throws WalFailedException when the log is or becomes failed first (then nothing more is ever written, and the
     *                            caller must not store into the ring)
     */
    public void makeRoom(long lsn) {
        for (int spins = 0; writer.writtenLsn() < lsn; spins++) {
            failure.check();
            long before = writer.writtenLsn();
            if (tryLock()) {
                try {
                    failure.check(); // a writer failed while this one waited: the ring must not be touched
                    writer.writeUpTo(appender.advancePublished());
                } catch (WalFailedException e) {
                    throw e;
                } catch (Throwable e) {
                    failure.fail("write of the published records failed: " + e, e);
                } finally {
                    held.set(0);
                }
                if (writer.writtenLsn() > before) {
                    continue; // progress: look again at once
                }
            }
            Backoff.pause(spins); // the record in the way is still being copied, or someone else is writing
        }
    }

    /**
     * Flush leader only: writes up to {@code target} unless someone already did, waiting for a writer that holds the
     * lock (it writes, never forces).
     *
     * @throws WalFailedException when another writer failed meanwhile (the target may not be in the files)
     */
    public void writeForFlush(long target) throws IOException {
        for (int spins = 0; writer.writtenLsn() < target; spins++) {
            if (!tryLock()) {
                Backoff.pause(spins);
                continue;
            }
            try {
                failure.check();
                writer.writeUpTo(target);
            } finally {
                held.set(0);
            }
        }
    }

    /** Takes the lock, waiting for the writer that holds it (a replica's rewind: see GroupCommit.rewindPositions). */
    public void lock() {
        for (int spins = 0; !tryLock(); spins++) {
            Backoff.pause(spins);
        }
    }

    public void unlock() {
        held.set(0);
    }

    /** Holder of the lock, for a replica's rewind: the files hold nothing from {@code lsn} on any more. */
    public void rewindWritten(long lsn) {
        writer.rewind(lsn);
    }

    private boolean tryLock() {
        return held.get() == 0 && held.compareAndSet(0, 1);
    }
}
