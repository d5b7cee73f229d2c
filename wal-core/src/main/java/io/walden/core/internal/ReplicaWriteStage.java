package io.walden.core.internal;

import io.walden.core.internal.commit.Completion;
import io.walden.core.internal.commit.Position;
import io.walden.core.replication.WriteStage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * {@link WriteStage} over a log's receiving side ({@link ReceivedWrites}) and its write path: the policy's state (bytes
 * written since the last force, and when that was) belongs to the one receiver thread that uses it.
 */
final class ReplicaWriteStage implements WriteStage {
    private static final long MAX_FLUSH_DELAY_NANOS = TimeUnit.MICROSECONDS.toNanos(MAX_FLUSH_DELAY_MICROS);

    private final ReceivedWrites received;
    /** Flushes what the receiver wrote (the write path's flush). */
    private final WalReplication.Log writes;
    private final Position written;
    private final Position flushed;
    /** Receiver thread only. */
    private long unflushedBytes;
    private long lastFlushNanos = System.nanoTime();
    private final ArchivedSegmentWrites archived;

    ReplicaWriteStage(ReceivedWrites received, WalReplication.Log writes, Position written, Position flushed, long segmentSize, long logId) {
        this.received = received;
        this.writes = writes;
        this.written = written;
        this.flushed = flushed;
        this.archived = new ArchivedSegmentWrites(this, segmentSize, logId);
    }

    @Override
    public long writeArchived(Path file, String name, long start, long end, long usableEnd, int chunkBytes) throws IOException {
        return archived.write(file, name, start, end, usableEnd, chunkBytes);
    }

    @Override
    public long write(long startLsn, ByteBuffer bytes) {
        int length = bytes.remaining();
        long end = received.write(startLsn, bytes);
        unflushedBytes += length;
        return end;
    }

    @Override
    public boolean flushIfDue(boolean moreQueued) {
        return due(moreQueued) && flushWritten();
    }

    @Override
    public boolean flushIfDue(boolean moreQueued, Runnable whenFlushed) {
        if (!due(moreQueued) || received.failed()) { // failed: the receiver's next write says so
            return false;
        }
        if (written.get() <= flushed.get()) {
            unflushedBytes = 0;
            return false;
        }
        writes.flushAsync(new Completion() { // one per force, on a replica's receiving side: not the append path
            @Override
            protected void complete(long lsn) {
                whenFlushed.run();
            }

            @Override
            protected void fail(Throwable cause) {
                whenFlushed.run(); // the log failed: the receiver's next write says so, and reports stay truthful
            }
        });
        unflushedBytes = 0;
        lastFlushNanos = System.nanoTime();
        return true;
    }

    /** The policy: a force once nothing more is queued, but not put off past the bounds. */
    private boolean due(boolean moreQueued) {
        return !moreQueued || unflushedBytes >= MAX_UNFLUSHED_BYTES || System.nanoTime() - lastFlushNanos >= MAX_FLUSH_DELAY_NANOS;
    }

    @Override
    public boolean flushWritten() {
        if (written.get() <= flushed.get()) {
            unflushedBytes = 0;
            return false;
        }
        writes.flush();
        unflushedBytes = 0;
        lastFlushNanos = System.nanoTime();
        return true;
    }
}
