package io.walden.core.internal.recovery;

import io.walden.core.internal.segment.SegmentFiles;
import io.walden.core.internal.segment.UninterruptibleChannels;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * The control file {@code walden.control}: the log's identity and a recent checkpoint, so that opening a
 * 100 GiB log scans only its last segments, and so that damage below a point known to have been flushed
 * is recognised as corruption instead of being cut off as a torn tail.
 *
 * <p>Two 512-byte slots, written alternately in place, each with a sequence number and a CRC-32C
 * (layout in {@code docs/format.md}, "Control file"). A torn write can only damage the slot being
 * written; the other still holds the previous checkpoint. Each write is forced before it returns.
 *
 * <p>Thread-safety: {@link #write} is synchronized; a checkpoint is written by one thread at a time.
 */
public final class ControlFile implements AutoCloseable {
    public static final String NAME = "walden.control";
    public static final long MAGIC = 0x4643_4E45_444C_4157L; // "WALDENCF" little-endian
    public static final int VERSION = 1;
    public static final int SLOT_SIZE = 512;
    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 8;
    public static final int SEQUENCE_OFFSET = 16;
    public static final int LOG_ID_OFFSET = 24;
    public static final int SEGMENT_SIZE_OFFSET = 32;
    public static final int SCAN_START_OFFSET = 40;
    public static final int SCAN_START_PREV_OFFSET = 48;
    public static final int FLUSHED_OFFSET = 56;
    public static final int STATE_OFFSET = 64;
    public static final int READ_LIMIT_OFFSET = 72;
    /** {@link #STATE_OFFSET}: the log was closed cleanly: everything appended was flushed, and nothing came after. */
    public static final int STATE_SHUT_DOWN = 1;
    public static final int CRC_OFFSET = SLOT_SIZE - Integer.BYTES;

    /**
     * What one slot holds. {@code scanStartPrev} is the prev link of the first record at {@code scanStart + 64};
     * {@code shutDown} says the log was closed cleanly (PostgreSQL's DB_SHUTDOWNED): everything appended was flushed
     * when this slot was written, and the log was not opened since; false while the log is in use.
     * {@code readLimit} is a replica's: its primary had flushed everything below it, so readers may see it (records
     * at or beyond it may still be rewound); {@code Long.MAX_VALUE} (stored as 0) for a primary's log.
     */
    public record Checkpoint(long logId, long segmentSize, long scanStart, long scanStartPrev, long flushedLsn,
                             boolean shutDown, long readLimit) {
        /** A checkpoint of a primary's log in use. */
        public Checkpoint(long logId, long segmentSize, long scanStart, long scanStartPrev, long flushedLsn) {
            this(logId, segmentSize, scanStart, scanStartPrev, flushedLsn, false, Long.MAX_VALUE);
        }
    }

    private final Path dir;
    private final FileChannel channel;
    private final ByteBuffer slot = ByteBuffer.allocateDirect(SLOT_SIZE).order(ByteOrder.LITTLE_ENDIAN);
    private long sequence;

    private ControlFile(Path dir, FileChannel channel, long sequence) {
        this.dir = dir;
        this.channel = channel;
        this.sequence = sequence;
    }

    public static boolean exists(Path dir) {
        return Files.exists(dir.resolve(NAME));
    }

    /** Creates the file (both slots holding {@code first}), forced, with its directory entry forced. */
    public static ControlFile create(Path dir, Checkpoint first) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(2 * SLOT_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        encode(b.slice(0, SLOT_SIZE).order(ByteOrder.LITTLE_ENDIAN), 1, first);
        encode(b.slice(SLOT_SIZE, SLOT_SIZE).order(ByteOrder.LITTLE_ENDIAN), 2, first);
        SegmentFiles.replaceDurably(dir, NAME, b.array());
        return open(dir);
    }

    /** Opens an existing control file; {@link #read()} tells what it holds. */
    public static ControlFile open(Path dir) throws IOException {
        FileChannel ch = UninterruptibleChannels.open(dir.resolve(NAME), StandardOpenOption.READ, StandardOpenOption.WRITE);
        ControlFile cf = new ControlFile(dir, ch, 0);
        Slot best = cf.readBest();
        cf.sequence = best == null ? 0 : best.sequence;
        return cf;
    }

    /**
     * The newest valid checkpoint.
     *
     * @throws IOException when neither slot is valid (the message says so; the log's segments may still be
     *                     intact, and Wal.open can rebuild the file from them when it is moved away)
     */
    public Checkpoint read() throws IOException {
        Slot best = readBest();
        if (best == null) {
            throw new IOException("control file " + dir.resolve(NAME) + " has no valid slot (both fail their CRC); "
                    + "move it away to rebuild it from the segments");
        }
        return best.checkpoint;
    }

    /** Writes {@code cp} into the older slot and forces it. */
    public synchronized void write(Checkpoint cp) throws IOException {
        long next = sequence + 1;
        encode(slot, next, cp);
        slot.position(0).limit(SLOT_SIZE);
        long at = (next & 1) * SLOT_SIZE;
        while (slot.hasRemaining()) {
            channel.write(slot, at + slot.position());
        }
        channel.force(false);
        sequence = next;
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }

    private record Slot(long sequence, Checkpoint checkpoint) {
    }

    private Slot readBest() throws IOException {
        Slot best = null;
        ByteBuffer b = ByteBuffer.allocate(SLOT_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 2; i++) {
            b.clear();
            int n = 0;
            while (b.hasRemaining()) {
                int r = channel.read(b, (long) i * SLOT_SIZE + b.position());
                if (r < 0) {
                    break;
                }
                n += r;
            }
            if (n < SLOT_SIZE || b.getLong(MAGIC_OFFSET) != MAGIC || b.getInt(VERSION_OFFSET) != VERSION
                    || b.getInt(CRC_OFFSET) != crc(b)) {
                continue;
            }
            long seq = b.getLong(SEQUENCE_OFFSET);
            if (best == null || seq > best.sequence) {
                best = new Slot(seq, new Checkpoint(b.getLong(LOG_ID_OFFSET), b.getLong(SEGMENT_SIZE_OFFSET),
                        b.getLong(SCAN_START_OFFSET), b.getLong(SCAN_START_PREV_OFFSET), b.getLong(FLUSHED_OFFSET),
                        b.getInt(STATE_OFFSET) == STATE_SHUT_DOWN,
                        b.getLong(READ_LIMIT_OFFSET) <= 0 ? Long.MAX_VALUE : b.getLong(READ_LIMIT_OFFSET)));
            }
        }
        return best;
    }

    private static void encode(ByteBuffer b, long sequence, Checkpoint cp) {
        for (int i = 0; i < SLOT_SIZE; i += Long.BYTES) {
            b.putLong(i, 0L);
        }
        b.putLong(MAGIC_OFFSET, MAGIC)
                .putInt(VERSION_OFFSET, VERSION)
                .putLong(SEQUENCE_OFFSET, sequence)
                .putLong(LOG_ID_OFFSET, cp.logId())
                .putLong(SEGMENT_SIZE_OFFSET, cp.segmentSize())
                .putLong(SCAN_START_OFFSET, cp.scanStart())
                .putLong(SCAN_START_PREV_OFFSET, cp.scanStartPrev())
                .putLong(FLUSHED_OFFSET, cp.flushedLsn())
                .putInt(STATE_OFFSET, cp.shutDown() ? STATE_SHUT_DOWN : 0)
                .putLong(READ_LIMIT_OFFSET, cp.readLimit() == Long.MAX_VALUE ? 0 : cp.readLimit());
        b.putInt(CRC_OFFSET, crc(b));
    }

    private static int crc(ByteBuffer b) {
        CRC32C crc = new CRC32C();
        crc.update(b.duplicate().position(0).limit(CRC_OFFSET));
        return (int) crc.getValue();
    }
}
