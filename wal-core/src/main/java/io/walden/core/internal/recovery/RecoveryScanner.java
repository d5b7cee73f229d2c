package io.walden.core.internal.recovery;

import io.walden.core.Lsn;
import io.walden.core.WalCorruptedException;
import io.walden.core.internal.record.RecordCheck;
import io.walden.core.internal.record.RecordCursor;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;
import io.walden.core.internal.segment.SegmentRegistry;
import net.openhft.chronicle.core.UnsafeMemory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;

/**
 * Finds the end of a log and repairs a torn tail (PostgreSQL's rule: the log ends at the first record that
 * fails any check; everything after it in that segment is zeroed).
 *
 * <ol>
 *   <li>Start at the checkpoint's segment with the prev link the checkpoint recorded.</li>
 *   <li>Validate each record (length, flags, prev link, CRC-32C); a padding record that closes a segment
 *       continues the scan at the next segment's first record.</li>
 *   <li>At the first failure, decide: below the checkpoint's flushed LSN the bytes were once durable, so the
 *       failure is corruption and open fails (unless the config allows truncation); at or above it, it is a
 *       torn tail of writes that were never acknowledged as durable.</li>
 *   <li>Zero every non-zero byte past the end (in the end segment and any later, prepared one) and force
 *       them, so that the repair is durable before the first new append (Kafka's "phantom messages"). Not after a
 *       clean close ({@code tailClean}): then nothing was written past the end but the next record's link (which the
 *       next append writes again), and reading every segment's tail would read a store of a thousand logs' whole
 *       preallocated files at each open (128 GB for a thousand logs of 64 MiB with one spare each).</li>
 * </ol>
 *
 * <p>Thread-safety: used by the opening thread only, before any other thread sees the log.
 */
public final class RecoveryScanner {

    /**
     * What the scan found. {@code firstPrevBySegment} maps each segment start it crossed to its first record's prev link.
     * {@code lastRecordLsn} is the last valid record, {@link Lsn#INVALID} for a new log, or -1 when the scan found no
     * record and the link before the scan start is unknown (a log that begins at a later segment: a new replica).
     */
    public record Result(long scanStart, long endLsn, long lastRecordLsn, long records, int segments, long bytesCut,
                         long firstBadLsn, String reason, boolean truncatedCorruption,
                         Map<Long, Long> firstPrevBySegment) {
    }

    /** A read-only block of zeros to compare segment tails against. */
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(1 << 20).asReadOnlyBuffer();

    private RecoveryScanner() {
    }

    /**
     * @param scanStartPrev prev link of the first record of the scan-start segment, or -1 when unknown
     *                      (control file rebuilt): then any link below the record is accepted for that record
     * @param fence         the highest LSN known to have been flushed; failures below it are corruption
     */
    public static Result scan(SegmentRegistry registry, long scanStart, long scanStartPrev, long fence,
                              boolean truncateAtCorruption) throws IOException {
        return scan(registry, scanStart, scanStartPrev, fence, truncateAtCorruption, false);
    }

    /**
     * @param tailClean the log was closed cleanly (its control file says so, and every open clears that before it
     *                  appends): its segments hold nothing past the end, and their tails are not read
     */
    public static Result scan(SegmentRegistry registry, long scanStart, long scanStartPrev, long fence,
                              boolean truncateAtCorruption, boolean tailClean) throws IOException {
        Segment seg = registry.get(scanStart);
        if (seg == null) {
            throw new WalCorruptedException("the segment at " + Lsn.format(scanStart)
                    + " that the control file's checkpoint points to is missing", scanStart, null);
        }
        Map<Long, Long> firstPrev = new HashMap<>();
        firstPrev.put(scanStart, scanStartPrev);
        RecordCursor cursor = new RecordCursor().start(seg.newView(), seg.startLsn(), SegmentHeaderDescriptor.LENGTH,
                scanStartPrev);
        long pos;
        long records = 0;
        int segments = 1;
        int code;
        while (true) {
            code = cursor.check();
            if (code != RecordCheck.VALID) {
                pos = cursor.lsn();
                break;
            }
            if (scanStartPrev < 0 && records == 0) {
                // Rebuilt control file: the first record was accepted with any backward link; from now on the
                // checkpoint records the link it actually has, so the exact check applies again.
                firstPrev.put(scanStart, cursor.prevLink());
            }
            records++;
            if (cursor.advance()) {
                long nextStart = seg.endLsn();
                firstPrev.put(nextStart, cursor.expectedPrev());
                Segment next = registry.get(nextStart);
                if (next == null) {
                    pos = nextStart + SegmentHeaderDescriptor.LENGTH;
                    code = RecordCheck.END; // the closing record is the last one; the next segment is not there yet
                    break;
                }
                seg = next;
                cursor.onto(seg.newView(), seg.startLsn(), SegmentHeaderDescriptor.LENGTH);
                segments++;
                reportProgress(registry, scanStart, segments, records);
            }
        }
        long prev = cursor.expectedPrev();
        // Decide before touching anything: a refused open must leave every byte as it found it.
        // A clean close that ends in a record that fails its checks is damage after the close: the tails are read then.
        boolean readTails = !tailClean || code != RecordCheck.END;
        Segment endSegment = readTails && registry.get(pos) == seg ? seg : null;
        long cut = endSegment != null ? nonZeroPast(endSegment, pos - seg.startLsn(), code == RecordCheck.END, false) : 0;
        for (Segment later : registry.snapshot()) {
            if (readTails && later.startLsn() > seg.startLsn()) {
                cut += nonZeroPast(later, SegmentHeaderDescriptor.LENGTH, false, false);
            }
        }
        boolean damaged = code != RecordCheck.END || cut > 0;
        long firstBad = code == RecordCheck.END ? Lsn.INVALID : pos;
        String reason;
        if (!damaged) {
            reason = "clean end";
        } else if (code == RecordCheck.END) {
            reason = "torn record at " + Lsn.format(pos) + " (its length word was never written)";
        } else {
            reason = RecordCheck.describe(code) + " at " + Lsn.format(pos);
        }
        // With storage that keeps its promises the end is never below the last recorded flush point: a clean
        // end there means flushed records vanished (a lost segment file, a lying cache), which is corruption too.
        boolean corruption = pos < fence;
        if (corruption && !truncateAtCorruption) {
            throw new WalCorruptedException((code == RecordCheck.END ? "the log ends at " + Lsn.format(pos) + " in segment "
                    + seg.path() : "record at " + Lsn.format(pos) + " in segment " + seg.path() + " fails validation ("
                    + RecordCheck.describe(code) + ")") + ", but it lies below " + Lsn.format(fence)
                    + ", a point recorded as flushed: this is corruption, not a torn tail. Nothing was changed. "
                    + "Restore the directory from a replica or backup, or open with truncateAtCorruption(true) to cut "
                    + "the log at this record and lose everything after it.", pos, seg.path());
        }
        if (endSegment != null) {
            nonZeroPast(endSegment, pos - seg.startLsn(), code == RecordCheck.END, true);
        }
        for (Segment later : registry.snapshot()) {
            if (readTails && later.startLsn() > seg.startLsn()) {
                nonZeroPast(later, SegmentHeaderDescriptor.LENGTH, false, true);
            }
        }
        return new Result(scanStart, pos, prev, records, segments, cut, firstBad, reason, corruption, firstPrev);
    }

    /**
     * Counts the non-zero bytes of {@code seg} from {@code offset} to its end; with {@code repair}, also zeroes
     * them and forces the segment when anything changed. When {@code atEnd} the 8 bytes of the next record's
     * prev link, which the writer fills in ahead of time, do not count as garbage (they are still zeroed).
     */
    private static long nonZeroPast(Segment seg, long offset, boolean atEnd, boolean repair) throws IOException {
        // Read through the file channel, not the mapping: a read fault maps the untouched pages ahead of the
        // log's end read-only, and every later first write to them then takes the slow write-protect fault
        // (measured here: about 10x the cost of a first write, which made appends after open 3x slower).
        long prefill = atEnd ? offset + RecordDescriptor.PREV_OFFSET : -1;
        ByteBuffer chunk = ByteBuffer.allocateDirect(ZEROS.capacity()).order(ByteOrder.LITTLE_ENDIAN);
        try {
            return nonZeroPast(seg, offset, prefill, repair, chunk);
        } finally {
            // Freed now rather than at a collection: a store opening a thousand logs reads two segment tails each, and
            // two gigabytes of direct buffers would wait for the JDK's direct memory limit to force a collection.
            UnsafeMemory.UNSAFE.invokeCleaner(chunk);
        }
    }

    private static long nonZeroPast(Segment seg, long offset, long prefill, boolean repair, ByteBuffer chunk)
            throws IOException {
        long size = seg.size();
        long nonZero = 0;
        long lastNonZero = -1;
        for (long at = offset; at < size; at += chunk.capacity()) {
            int len = (int) Math.min(chunk.capacity(), size - at);
            chunk.clear().limit(len);
            while (chunk.hasRemaining() && seg.channel().read(chunk, at + chunk.position()) >= 0) {
                // fill the chunk
            }
            chunk.flip();
            if (chunk.mismatch(ZEROS.duplicate().limit(chunk.limit())) < 0) {
                continue; // the common case: a vectorised compare finds the whole chunk zero
            }
            for (int i = 0; i + Long.BYTES <= chunk.limit(); i += Long.BYTES) {
                long word = chunk.getLong(i);
                if (word != 0) {
                    lastNonZero = at + i;
                    if (at + i != prefill) {
                        nonZero += nonZeroBytes(word);
                    }
                }
            }
        }
        if (repair && lastNonZero >= 0) {
            seg.zero(offset, lastNonZero + Long.BYTES);
            seg.force(false);
        }
        return nonZero;
    }

    /** How many of a word's eight bytes are not zero (used by recovery and by LogInspector). */
    public static int nonZeroBytes(long word) {
        int n = 0;
        for (int i = 0; i < Long.BYTES; i++) {
            if (((word >>> (8 * i)) & 0xFF) != 0) {
                n++;
            }
        }
        return n;
    }

    /**
     * A long scan (a rebuilt control file scans from the oldest segment) says how far it got, every 16 segments,
     * so that whoever watches a starting server sees progress rather than silence.
     */
    private static void reportProgress(SegmentRegistry registry, long scanStart, int segments, long records) {
        if (segments % 16 == 0) {
            long total = registry.snapshot().stream().filter(x -> x.startLsn() >= scanStart).count();
            PROGRESS.info("Recovery: scanned {} of {} segments ({} records so far)", segments, total, records);
        }
    }

    private static final Logger PROGRESS = LoggerFactory.getLogger(RecoveryScanner.class);
}
