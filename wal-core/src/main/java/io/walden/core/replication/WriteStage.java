package io.walden.core.replication;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * A replica's write stage: it writes what its primary sent and decides when to force it, by one policy
 * (PostgreSQL's walreceiver's): force once nothing more is queued, so that one force covers every frame that arrived
 * during the last, but never put it off past {@value #MAX_UNFLUSHED_BYTES} bytes or
 * {@value #MAX_FLUSH_DELAY_MICROS} µs, however busy the stream. Got from {@link ReplicatedLog#writeStage()}.
 *
 * <p>What the receiver acknowledges follows from it (docs/replication-protocol.md, "Replica behaviour"): the written position
 * after every {@link #write} ({@code remote_write} commits wait for it), the flushed one after every force
 * ({@code on} commits wait for it). A replica never reports flushed what it did not force.
 *
 * <p>Thread-safety: one receiver thread; local appends must be refused meanwhile (the log is a replica's).
 */
public interface WriteStage {
    /** A force is not put off past this many written bytes. */
    long MAX_UNFLUSHED_BYTES = 4L << 20;
    /** Nor past this long since the last one. */
    long MAX_FLUSH_DELAY_MICROS = 1000;

    /**
     * Writes whole records received from a primary, verbatim, from exactly the log's insert position
     * ({@link ReplicatedLog#writeReceived}: each record checked before the positions move). Not forced here.
     *
     * @return the new written position
     */
    long write(long startLsn, ByteBuffer bytes);

    /**
     * After a {@link #write}: forces what is written when nothing more is queued, or when the bounds above are
     * reached.
     *
     * @param moreQueued whether further received bytes wait for this stage
     * @return whether it forced (the flushed position moved to the written one)
     */
    boolean flushIfDue(boolean moreQueued);

    /**
     * {@link #flushIfDue}, without waiting for the force, for a receiver that must not block in one log's force (a
     * replica of many logs, whose logs share a few receiver threads): when due, starts the force of what is written
     * and returns. A store's logs started so share one force of the store's journal, on the journal's own thread (docs/
     * group-commit.md, "Flushes across logs"). Call it again only after {@code whenFlushed} ran: the bytes written
     * meanwhile wait for the next.
     *
     * @param whenFlushed runs exactly once when a force started: once it ended (the flushed position moved to where the
     *                    written one was, or the log failed), on the thread that forced; it should only hand the report
     *                    to the receiver
     * @return whether a force started (never on a failed log: one that ends in a failure is the last, and the
     *         receiver's next {@link #write} reports the failure)
     */
    boolean flushIfDue(boolean moreQueued, Runnable whenFlushed);

    /**
     * Forces whatever is written and not yet flushed: a batch cut short by a broken connection, before a report (a
     * resumed stream starts after those bytes, so nothing else would force them, and {@code on} commits would wait
     * for them forever), or bytes fetched from an archive.
     *
     * @return whether there was anything to force
     */
    boolean flushWritten();

    /**
     * Writes the records of an archived segment file (fetched by a replica from its group's archive) as if they had
     * been streamed: the file's segment header must be this log's segment at {@code start}; its records from {@code end}
     * (this log's insert position, inside that segment) up to {@code usableEnd} (where the file's epoch ends, or
     * {@code Long.MAX_VALUE}) or its first zeros are written through {@link #write} (each record checked), read in
     * chunks of whole records of {@code chunkBytes} (or one record, when larger), then forced.
     *
     * @param name what the file is, for errors (the object's name and its archive)
     * @return the bytes written (0: the file holds nothing past this log's end)
     * @throws IOException when the file cannot be read or is not this log's segment at {@code start}
     */
    long writeArchived(Path file, String name, long start, long end, long usableEnd, int chunkBytes) throws IOException;
}
