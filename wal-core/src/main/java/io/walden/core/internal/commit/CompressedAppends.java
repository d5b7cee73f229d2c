package io.walden.core.internal.commit;

import io.walden.core.Compression;
import io.walden.core.Durability;
import io.walden.core.internal.record.DictionaryTrainer;
import io.walden.core.internal.record.PayloadCompressor;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.record.ZstdDictionary;

import java.nio.ByteBuffer;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Appends whose payload is stored compressed when that saves space (docs/format.md, "Compressed payloads"). The
 * payload is compressed on the appending thread before its record is reserved, into that thread's buffer: no
 * allocation once it has grown, and no reservation held meanwhile.
 *
 * <p><b>zstd dictionaries</b> (docs/format.md, "zstd dictionaries"). A record compressed with a dictionary is
 * readable only where a copy of the dictionary precedes it <em>in its own segment</em>: then truncation, archiving,
 * a replica that starts at a later segment and {@code dump} of one file all keep what they need. The writer keeps
 * that rule without touching the reservation's CAS:
 * <ol>
 *   <li>Before compressing with the dictionary, an appender that sees no copy in the segment of the insert position
 *       appends one (a control record; one thread at a time, so one copy per segment in the common case). Appenders
 *       that find another writing it compress their payload without the dictionary rather than wait, and so does a
 *       non-waiting append (an event loop's) whose copy could not be reserved at once.</li>
 *   <li>After reserving, it checks that the newest copy lies in the reserved record's segment, below it. A roll
 *       between the two steps breaks that: the reservation is then published as padding (a record readers skip, as
 *       for an aborted claim) and the payload is appended compressed without the dictionary. At most once per
 *       append, so the loop always ends.</li>
 * </ol>
 * The check reads {@link #copy} after the reservation: a copy at a lower LSN in the same segment was reserved
 * before it, is filled by its appender (or the log failed) and is published before the record (publication is in
 * LSN order), so a reader that reaches the record can reach the copy.
 *
 * <p>Thread-safety: every method from any number of appending threads.
 */
public final class CompressedAppends {
    private static final int HEADER = RecordDescriptor.TIMED_HEADER_LENGTH;

    private final Appender appender;
    private final DictionaryTrainer dictionaries;
    private final long segmentMask;
    /** Every thread's compressor, to free their native contexts when the log closes. */
    private final Queue<PayloadCompressor> all = new ConcurrentLinkedQueue<>();
    private final ThreadLocal<PayloadCompressor> compressors;
    /** Held by the one appender writing a copy of the dictionary. */
    private final AtomicBoolean writingCopy = new AtomicBoolean();
    /** A copy of a dictionary in the log: which one, and its LSN. */
    private record Copy(ZstdDictionary dictionary, long lsn) {
    }

    private static final Copy NO_COPY = new Copy(null, -1);
    /**
     * The newest copy written, or {@link #NO_COPY}: none since open or since the log was rewound. It names its
     * dictionary, so a copy of one never vouches for records compressed with another.
     */
    private volatile Copy copy = NO_COPY;

    public CompressedAppends(Appender appender, DictionaryTrainer dictionaries, long segmentSize) {
        this.appender = appender;
        this.dictionaries = dictionaries;
        this.segmentMask = -segmentSize;
        int level = dictionaries.zstdLevel();
        this.compressors = ThreadLocal.withInitial(() -> {
            PayloadCompressor c = new PayloadCompressor(level);
            all.add(c);
            return c;
        });
    }

    public long append(int type, byte[] src, int offset, int length, Compression codec, Durability durability, boolean mayWait) {
        PayloadCompressor c = compressors.get();
        ZstdDictionary dictionary = dictionaryFor(codec, src, offset, length, mayWait);
        int flags = c.compress(codec, src, offset, length, dictionary);
        if (flags == 0) {
            return appender.appendStored(type, src, offset, length, 0, durability, mayWait);
        }
        long lsn = appender.reserve(RecordDescriptor.aligned(HEADER + c.storedLength()), mayWait);
        if (lsn == Appender.NOT_READY) {
            return Appender.NOT_READY;
        }
        if (c.usedDictionary() && !copyPrecedes(dictionary, lsn)) {
            appender.publish(lsn, HEADER + c.storedLength(), RecordDescriptor.FLAG_PADDING, null); // a roll came between
            flags = c.compress(codec, src, offset, length, null);
            return flags == 0 ? appender.appendStored(type, src, offset, length, 0, durability, mayWait)
                    : appender.appendStored(type, c.stored(), 0, c.storedLength(), flags, durability, mayWait);
        }
        return appender.fill(lsn, type, c.stored(), 0, c.storedLength(), flags, durability);
    }

    public long append(int type, ByteBuffer src, Compression codec, Durability durability, boolean mayWait) {
        PayloadCompressor c = compressors.get();
        byte[] array = c.stage(src);
        return append(type, array, c.stagedOffset(), src.remaining(), codec, durability, mayWait);
    }

    /**
     * The dictionary to compress this payload with, a copy of it in the insert position's segment first; or null (not
     * zstd, too large, no dictionary yet: the payload is then offered as a training sample).
     */
    private ZstdDictionary dictionaryFor(Compression codec, byte[] src, int offset, int length, boolean mayWait) {
        if (codec != Compression.ZSTD || length < Compression.MIN_PAYLOAD || length > dictionaries.maxPayload()) {
            return null;
        }
        ZstdDictionary d = dictionaries.active();
        if (d == null) {
            dictionaries.offer(src, offset, length);
            return null;
        }
        if (inInsertSegment(copy, d)) {
            return d;
        }
        if (!writingCopy.compareAndSet(false, true)) {
            return null; // another appender is writing the copy: this one record goes without (no thread ever waits here)
        }
        try {
            if (!inInsertSegment(copy, d)) {
                byte[] payload = d.controlPayload();
                // No durability of its own (not counted as an append): the record after it is flushed and shipped with it.
                long lsn = appender.appendStored(0, payload, 0, payload.length, RecordDescriptor.FLAG_CONTROL, null, mayWait);
                if (lsn == Appender.NOT_READY) {
                    return null; // an event loop's append: the next one tries again
                }
                copy = new Copy(d, lsn); // once per segment
            }
        } finally {
            writingCopy.set(false);
        }
        return d;
    }

    private boolean inInsertSegment(Copy c, ZstdDictionary d) {
        return c.dictionary == d && (c.lsn & segmentMask) == (appender.insertPosition() & segmentMask);
    }

    private boolean copyPrecedes(ZstdDictionary d, long lsn) {
        Copy c = copy;
        return c.dictionary == d && c.lsn < lsn && (c.lsn & segmentMask) == (lsn & segmentMask);
    }

    /** The log was rewound: a copy may have been cut away with the rest of the tail. */
    public void forgetCopy() {
        copy = NO_COPY;
    }

    /** The log is closing and no appender is inside: frees the codecs' native contexts, stops training. */
    public void close() {
        dictionaries.close();
        for (PayloadCompressor c; (c = all.poll()) != null; ) {
            c.close();
        }
    }
}
