package io.walden.core.internal.recovery;

import io.walden.core.Compression;
import io.walden.core.Lsn;
import io.walden.core.RecordTime;
import io.walden.core.internal.record.ControlRecord;
import io.walden.core.internal.record.PayloadDecompressor;
import io.walden.core.internal.record.RecordCheck;
import io.walden.core.internal.record.RecordCursor;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.record.ZstdDictionary;
import io.walden.core.internal.segment.SegmentFiles;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a log directory without changing a byte of it: every segment header, every record from the oldest
 * to the end, and what lies past the end. The engine behind the {@code dump} and {@code verify} tools;
 * it works on a directory no process holds (it takes no lock and maps files read-only).
 *
 * <p>The walk mirrors recovery (docs/format.md): the chain of prev links runs from the oldest record; the
 * first record that fails a check ends the log; past the end, only zeros (and the next record's prev link,
 * written ahead of time) are expected.
 *
 * <p>Thread-safety: one inspection per instance, on the calling thread.
 */
public final class LogInspector {

    /** One record met by the walk. */
    /**
     * @param compression       how the payload is stored
     * @param uncompressedLength the payload's length once restored (the stored length when not compressed)
     * @param control           a control record (a cursor change: docs/format.md), the log's own
     * @param time              the record's time in microseconds since the epoch (UTC), or
     *                          {@link RecordCursor#NO_TIME} (padding, format 1)
     * @param payloadLength     the stored payload's length
     */
    public record RecordInfo(long lsn, long prev, int length, int type, boolean padding, Compression compression,
                             int uncompressedLength, boolean control, long time, int payloadLength) {
        /** The record's time, or null when it carries none. */
        public Instant timestamp() {
            return time == RecordCursor.NO_TIME ? null
                    : RecordTime.ofMicros(time);
        }
    }

    /** Told about the walk as it goes; return false from {@link #onRecord} to stop early. */
    public interface Visitor {
        default void onSegment(long startLsn, Path file, int index, int count) {
        }

        default boolean onRecord(RecordInfo record) {
            return true;
        }
    }

    /**
     * The outcome.
     *
     * @param problem    null when the log is clean, else a sentence naming the first problem precisely
     * @param problemLsn where that problem is, or {@link Lsn#INVALID}
     * @param tornBytes  non-zero bytes found past the end (what recovery would cut off)
     */
    public record Result(long logId, long segmentSize, int segments, long oldestLsn, long endLsn, long records,
                         long paddingRecords, long controlFlushedLsn, String problem, long problemLsn, long tornBytes) {
        public boolean clean() {
            return problem == null;
        }
    }

    private final Path dir;
    /** The largest payload restored: the log's configured maximum is not known here, but it fits in a segment. */
    private static final int MAX_RESTORED = 1 << 30;

    private final boolean segmentsOnly;

    public LogInspector(Path dir) {
        this(dir, false);
    }

    private LogInspector(Path dir, boolean segmentsOnly) {
        this.dir = dir;
        this.segmentsOnly = segmentsOnly;
    }

    /**
     * An inspector of the segment files alone: a missing control file is no problem (a log being restored from an
     * archive has none until it is first opened), and one present is not read.
     */
    public static LogInspector segmentsOnly(Path dir) {
        return new LogInspector(dir, true);
    }

    public Result inspect(Visitor visitor) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new IOException(dir + " is not a directory");
        }
        List<Long> starts = SegmentFiles.list(dir);
        ControlFile.Checkpoint cp = null;
        String controlProblem = null;
        if (segmentsOnly) {
            cp = null;
        } else if (ControlFile.exists(dir)) {
            try (ControlFile cf = ControlFile.open(dir)) {
                cp = cf.read();
            } catch (IOException e) {
                controlProblem = e.getMessage();
            }
        } else if (!starts.isEmpty()) {
            controlProblem = "control file " + ControlFile.NAME + " is missing (open rebuilds it from the segments)";
        }
        if (starts.isEmpty()) {
            return new Result(cp == null ? 0 : cp.logId(), cp == null ? 0 : cp.segmentSize(), 0, Lsn.INVALID, Lsn.INVALID,
                    0, 0, cp == null ? Lsn.INVALID : cp.flushedLsn(), "no segment files in " + dir, Lsn.INVALID, 0);
        }
        long segmentSize = cp != null ? cp.segmentSize() : Files.size(SegmentFiles.path(dir, starts.get(0)));
        long logId = cp != null ? cp.logId() : 0;
        Walk walk = new Walk(segmentSize, starts.get(0) + SegmentHeaderDescriptor.LENGTH);
        walk.problem = controlProblem;
        try {
            for (int i = 0; i < starts.size() && !walk.stopped; i++) {
                long start = starts.get(i);
                Path file = SegmentFiles.path(dir, start);
                visitor.onSegment(start, file, i, starts.size());
                if (i > 0 && start != starts.get(i - 1) + segmentSize) {
                    walk.fail("segment " + SegmentFiles.name(starts.get(i - 1) + segmentSize) + " is missing", starts.get(i - 1) + segmentSize);
                    break;
                }
                try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                    if (ch.size() != segmentSize) {
                        walk.fail("segment " + file.getFileName() + " is " + ch.size() + " bytes long, expected " + segmentSize, start);
                        break;
                    }
                    MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_ONLY, 0, segmentSize);
                    ByteBuffer view = map.order(ByteOrder.LITTLE_ENDIAN);
                    String headerProblem = SegmentHeaderDescriptor.validate(view.duplicate().order(ByteOrder.LITTLE_ENDIAN)
                            .limit(SegmentHeaderDescriptor.LENGTH), segmentSize, start, logId);
                    if (headerProblem != null) {
                        walk.fail("segment " + file.getFileName() + ": " + headerProblem, start);
                        break;
                    }
                    if (logId == 0) {
                        logId = view.getLong(SegmentHeaderDescriptor.LOG_ID_OFFSET);
                    }
                    walk.segment(view, start, visitor);
                }
            }
        } finally {
            walk.decompressor.close();
        }
        if (cp != null && walk.problemLsn != Lsn.INVALID && walk.problem != null && walk.problemLsn < cp.flushedLsn()) {
            walk.problem += "; this lies below " + Lsn.format(cp.flushedLsn()) + ", recorded as flushed: CORRUPTION "
                    + "(opening the log refuses it)";
        } else if (cp != null && walk.problemLsn != Lsn.INVALID && walk.problem != null) {
            walk.problem += "; past the last checkpoint's flushed LSN " + Lsn.format(cp.flushedLsn())
                    + ", so opening the log treats it as a torn tail and cuts it off";
        } else if (cp != null && walk.problem == null && !walk.stoppedByVisitor && walk.end < cp.flushedLsn()) {
            walk.fail("the log ends at " + Lsn.format(walk.end) + " but the control file recorded "
                    + Lsn.format(cp.flushedLsn()) + " as flushed: records were lost", walk.end);
        }
        return new Result(logId, segmentSize, starts.size(), starts.get(0) + SegmentHeaderDescriptor.LENGTH, walk.end,
                walk.records, walk.paddings, cp == null ? Lsn.INVALID : cp.flushedLsn(), walk.problem, walk.problemLsn, walk.torn);
    }

    /** The state of one walk over the segments. */
    private final class Walk {
        final long segmentSize;
        long end;
        long prev = -1;
        long records;
        long paddings;
        long torn;
        boolean ended;
        boolean stopped;
        boolean stoppedByVisitor;
        String problem;
        long problemLsn = Lsn.INVALID;
        /** The zstd dictionaries of the segment walked, met so far: a record may use only these (docs/format.md). */
        final Map<Long, ZstdDictionary> dictionaries = new HashMap<>();
        final RecordCursor cursor = new RecordCursor();
        /** Closed at the walk's end (native contexts). */
        final PayloadDecompressor decompressor = new PayloadDecompressor();

        Walk(long segmentSize, long first) {
            this.segmentSize = segmentSize;
            this.end = first;
        }

        void fail(String what, long lsn) {
            problem(what, lsn);
            stopped = true;
        }

        /** Notes the first problem found, without stopping the walk. */
        void problem(String what, long lsn) {
            if (problem == null) {
                problem = what;
                problemLsn = lsn;
            }
        }

        /** Walks the records of one segment; the walk's end is in this segment unless the log already ended. */
        void segment(ByteBuffer view, long start, Visitor visitor) {
            dictionaries.clear();
            if (ended) {
                countTorn(view, SegmentHeaderDescriptor.LENGTH, -1);
                return;
            }
            RecordCursor cursor = this.cursor.start(view, start, end - start, prev);
            while (true) {
                int code = cursor.check();
                long offset = cursor.offset();
                if (code != RecordCheck.VALID) {
                    ended = true;
                    if (code != RecordCheck.END) {
                        fail("record at " + Lsn.format(start + offset) + " in " + SegmentFiles.name(start) + ": "
                                + RecordCheck.describe(code), start + offset);
                    }
                    // Past a clean end the next record's prev link may have been written ahead of time (not
                    // garbage); a record that failed a check is garbage, link and all. As recovery counts.
                    countTorn(view, offset, code == RecordCheck.END ? offset + RecordDescriptor.PREV_OFFSET : -1);
                    return;
                }
                int length = cursor.length();
                int flags = cursor.flags();
                int codec = flags & RecordDescriptor.CODEC_MASK;
                int uncompressed = length - RecordDescriptor.payloadOffset(flags);
                int payloadLength = uncompressed;
                if (codec != 0) {
                    // Restored once to prove it can be: a payload that passes its CRC but not its codec is damage.
                    ByteBuffer restored = decompressor.decompress(codec, cursor.payload(), (int) Math.min(segmentSize, MAX_RESTORED),
                            dictionaries::get);
                    if (restored == null) {
                        // Damage to report, but not the log's end: recovery keeps the record (it is whole and its CRC
                        // holds), and readers refuse it. The walk goes on, so its end is recovery's.
                        problem("record at " + Lsn.format(start + offset) + " in " + SegmentFiles.name(start)
                                + ": its compressed payload cannot be restored: " + decompressor.failure(), start + offset);
                        uncompressed = -1;
                    } else {
                        uncompressed = restored.remaining();
                    }
                }
                if ((flags & RecordDescriptor.FLAG_CONTROL) != 0) {
                    ZstdDictionary d = ControlRecord.decodeDictionary(cursor.payload());
                    if (d != null) {
                        dictionaries.put(d.id(), d);
                    }
                }
                RecordInfo info = new RecordInfo(start + offset, cursor.prevLink(), length, cursor.type(),
                        (flags & RecordDescriptor.FLAG_PADDING) != 0,
                        codec == RecordDescriptor.CODEC_LZ4 ? Compression.LZ4 : codec == RecordDescriptor.CODEC_ZSTD
                                ? Compression.ZSTD : Compression.NONE, uncompressed,
                        (flags & RecordDescriptor.FLAG_CONTROL) != 0, cursor.time(), payloadLength);
                if (info.padding()) {
                    paddings++;
                } else {
                    records++;
                }
                boolean closing = cursor.advance();
                prev = cursor.expectedPrev();
                end = cursor.lsn();
                if (!visitor.onRecord(info)) {
                    stopped = true;
                    stoppedByVisitor = true;
                    return;
                }
                if (closing) {
                    end = start + segmentSize + SegmentHeaderDescriptor.LENGTH;
                    return; // a closing record: the walk continues in the next segment
                }
            }
        }

        /** Counts non-zero bytes from {@code from}, except the 8 at {@code prefill} (the next prev link, written early). */
        private void countTorn(ByteBuffer view, long from, long prefill) {
            long before = torn;
            for (long o = from; o + Long.BYTES <= segmentSize; o += Long.BYTES) {
                long word = view.getLong((int) o);
                if (word != 0 && o != prefill) {
                    torn += RecoveryScanner.nonZeroBytes(word);
                }
            }
            if (torn > before && problem == null) {
                problem = (torn - before) + " non-zero bytes past the end of the log at " + Lsn.format(end);
                problemLsn = end;
            }
        }
    }
}
