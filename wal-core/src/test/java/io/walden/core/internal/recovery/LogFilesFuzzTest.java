package io.walden.core.internal.recovery;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.walden.core.EpochHistory;
import io.walden.core.Lsn;
import io.walden.core.WalCorruptedException;
import io.walden.core.internal.record.RecordCheck;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.segment.SegmentFiles;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;
import io.walden.core.internal.segment.SegmentRegistry;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Comparator;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fuzz targets for everything Walden reads back from its own directory: a segment's records (recovery's scan and
 * the read-only inspector behind dump and verify), the control file and the epoch history file. Whatever the
 * bytes, each reader either returns something valid or refuses with its documented error, never anything else.
 * Their checked-in corpus runs with the unit tests; {@code mvn verify} fuzzes each for a few seconds, -Pfuzz longer.
 */
class LogFilesFuzzTest {
    private static final long SEGMENT = 64 << 10;
    private static final long LOG_ID = 0x5EED;
    private static Path dir;
    private static SegmentRegistry registry;
    private static Segment segment;

    /** One directory with one mapped segment, reused by every input (each rewrites it whole). */
    private static synchronized void setUp() throws IOException {
        if (dir != null) {
            return;
        }
        Path shm = Path.of("/dev/shm"); // memory-backed where there is one: the scan forces its repairs, thousands of times
        dir = Files.isDirectory(shm) && Files.isWritable(shm) ? Files.createTempDirectory(shm, "walden-fuzz-log")
                : Files.createTempDirectory("walden-fuzz-log");
        registry = new SegmentRegistry(SEGMENT);
        segment = Segment.map(SegmentFiles.prepare(dir, SEGMENT, 0, LOG_ID, null), 0, SEGMENT);
        registry.add(segment);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteQuietly(dir)));
    }

    /**
     * Whatever follows a segment's header, recovery ends the log after a chain of valid records (every one passes
     * every check, with exact prev links), agrees with the read-only inspector on the end, the record count and the
     * bytes past the end, and its repair is complete (a second scan cuts nothing). With a flush point beyond the
     * end it refuses as corruption and changes nothing.
     *
     * <p>The input describes a segment rather than being one: a fuzzer cannot forge a CRC-32C, so the harness writes
     * well-formed records (valid CRCs and links) as the input asks, mixed with records that are wrong in one field,
     * raw garbage and torn words, then flips bytes where the input says.
     */
    @FuzzTest(maxDuration = "5s")
    void recoveryKeepsExactlyTheValidPrefixOfASegment(FuzzedDataProvider data) throws IOException {
        setUp();
        byte[] file = segmentFrom(data);
        write(file);
        try {
            RecoveryScanner.scan(registry, 0, -1, 2 * SEGMENT, false);
        } catch (WalCorruptedException e) {
            assertThat(read()).as("a refused recovery changes nothing").isEqualTo(file);
        }
        write(file);
        LogInspector.Result inspected = new LogInspector(dir).inspect(new LogInspector.Visitor() { });
        RecoveryScanner.Result scan = RecoveryScanner.scan(registry, 0, -1, 0, false);
        assertThat(inspected.endLsn()).isEqualTo(scan.endLsn());
        assertThat(inspected.records() + inspected.paddingRecords()).isEqualTo(scan.records());
        assertThat(inspected.tornBytes()).isEqualTo(scan.bytesCut());
        assertThat(walkValidChain(scan.endLsn())).isEqualTo(scan.records());
        RecoveryScanner.Result again = RecoveryScanner.scan(registry, 0, -1, 0, false);
        assertThat(again.endLsn()).isEqualTo(scan.endLsn());
        assertThat(again.bytesCut()).as("the repair left nothing to cut").isZero();
    }

    /** A segment image as the input describes it (see above). */
    private static byte[] segmentFrom(FuzzedDataProvider data) {
        ByteBuffer file = ByteBuffer.allocate((int) SEGMENT).order(ByteOrder.LITTLE_ENDIAN);
        file.put(SegmentHeaderDescriptor.encode(SEGMENT, 0, LOG_ID));
        CRC32C crc = new CRC32C();
        long at = SegmentHeaderDescriptor.LENGTH;
        long prev = Lsn.INVALID;
        while (at + RecordDescriptor.HEADER_LENGTH <= SEGMENT && data.remainingBytes() > 8) {
            int kind = data.consumeInt(0, 15);
            if (kind == 15) {
                break; // a clean end: zeros follow
            }
            if (kind == 14) { // raw garbage where a record would start
                byte[] junk = data.consumeBytes(data.consumeInt(1, 64));
                file.put((int) at, junk, 0, (int) Math.min(junk.length, SEGMENT - at));
                break;
            }
            boolean closing = kind == 13; // a padding record that closes the segment
            int length = closing ? (int) (SEGMENT - at) : RecordDescriptor.HEADER_LENGTH + data.consumeInt(0, kind < 4 ? 200 : 3000);
            long next = at + RecordDescriptor.aligned(length);
            if (!closing && next + RecordDescriptor.HEADER_LENGTH > SEGMENT) {
                break;
            }
            int o = (int) at;
            file.putLong(o + RecordDescriptor.PREV_OFFSET, kind == 12 ? prev + 8 : prev); // 12: a wrong prev link
            file.putShort(o + RecordDescriptor.TYPE_OFFSET, (short) data.consumeInt(0, 0xFFFF));
            file.putShort(o + RecordDescriptor.FLAGS_OFFSET, (short) (closing ? RecordDescriptor.FLAG_PADDING
                    : kind == 11 ? (data.consumeBoolean() ? 16 : RecordDescriptor.CODEC_MASK) // 11: an unknown flag or codec
                    : data.consumeBoolean() ? 1 : data.consumeInt(0, 2) * RecordDescriptor.CODEC_LZ4)); // padding, or a codec
            byte[] payload = data.consumeBytes(length - RecordDescriptor.HEADER_LENGTH);
            file.put(o + RecordDescriptor.HEADER_LENGTH, payload);
            int checksum = RecordCheck.crc(file.duplicate().order(ByteOrder.LITTLE_ENDIAN).clear(), crc, at, length);
            file.putInt(o + RecordDescriptor.CRC_OFFSET, kind == 10 ? ~checksum : checksum); // 10: a wrong CRC
            file.putInt(o + RecordDescriptor.LENGTH_OFFSET, kind == 9 ? length + data.consumeInt(1, 64) : length); // 9: a wrong length
            prev = at;
            at = next;
            if (closing) {
                break;
            }
        }
        if (at + Long.BYTES <= SEGMENT && data.consumeBoolean()) {
            file.putLong((int) at + RecordDescriptor.PREV_OFFSET, prev); // the next record's link, written ahead
        }
        for (int flips = data.consumeInt(0, 4); flips > 0 && data.remainingBytes() > 0; flips--) { // torn or rotten bytes
            int where = data.consumeInt(SegmentHeaderDescriptor.LENGTH, (int) SEGMENT - 1);
            file.put(where, data.consumeByte());
        }
        return file.array();
    }

    /**
     * The control file yields the checkpoint of its valid slot with the highest sequence, whatever the other slot
     * holds (torn, rotten, another version, missing), that checkpoint survives being written back, and a file with
     * no valid slot is refused with an IOException. Like the segment target, the input describes two slots (each
     * well-formed with a valid CRC-32C, or not) plus rotten bytes and a torn length, since a fuzzer cannot forge a CRC.
     */
    @FuzzTest(maxDuration = "5s")
    void controlFileReadsTheNewestValidSlotOrIsRefused(FuzzedDataProvider data) throws IOException {
        setUp();
        ByteBuffer file = ByteBuffer.allocate(2 * ControlFile.SLOT_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        ControlFile.Checkpoint[] written = new ControlFile.Checkpoint[2];
        long[] sequences = new long[2];
        for (int i = 0; i < 2; i++) {
            ByteBuffer slot = file.slice(i * ControlFile.SLOT_SIZE, ControlFile.SLOT_SIZE).order(ByteOrder.LITTLE_ENDIAN);
            if (data.consumeBoolean()) {
                slot.put(data.consumeBytes(ControlFile.SLOT_SIZE)); // raw bytes: valid only by a CRC-32C collision
                continue;
            }
            sequences[i] = data.consumeLong();
            written[i] = new ControlFile.Checkpoint(data.consumeLong(), data.consumeLong(), data.consumeLong(),
                    data.consumeLong(), data.consumeLong());
            slot.putLong(ControlFile.MAGIC_OFFSET, ControlFile.MAGIC)
                    .putInt(ControlFile.VERSION_OFFSET, data.consumeInt(0, 7) == 0 ? 2 : ControlFile.VERSION)
                    .putLong(ControlFile.SEQUENCE_OFFSET, sequences[i])
                    .putLong(ControlFile.LOG_ID_OFFSET, written[i].logId())
                    .putLong(ControlFile.SEGMENT_SIZE_OFFSET, written[i].segmentSize())
                    .putLong(ControlFile.SCAN_START_OFFSET, written[i].scanStart())
                    .putLong(ControlFile.SCAN_START_PREV_OFFSET, written[i].scanStartPrev())
                    .putLong(ControlFile.FLUSHED_OFFSET, written[i].flushedLsn());
            CRC32C crc = new CRC32C();
            crc.update(slot.duplicate().position(0).limit(ControlFile.CRC_OFFSET));
            slot.putInt(ControlFile.CRC_OFFSET, (int) crc.getValue());
        }
        byte[] image = file.array();
        for (int flips = data.consumeInt(0, 3); flips > 0 && data.remainingBytes() > 0; flips--) {
            image[data.consumeInt(0, image.length - 1)] = data.consumeByte();
        }
        int length = data.consumeBoolean() ? data.consumeInt(0, image.length) : image.length; // a torn file
        Path cfDir = dir.resolve("control");
        Files.createDirectories(cfDir);
        Files.write(cfDir.resolve(ControlFile.NAME), Arrays.copyOf(image, length));

        ControlFile.Checkpoint expected = null;
        long best = 0;
        ByteBuffer check = ByteBuffer.wrap(Arrays.copyOf(image, length)).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 2; i++) {
            if (written[i] == null || length < (i + 1) * ControlFile.SLOT_SIZE) {
                continue;
            }
            ByteBuffer slot = check.slice(i * ControlFile.SLOT_SIZE, ControlFile.SLOT_SIZE).order(ByteOrder.LITTLE_ENDIAN);
            CRC32C crc = new CRC32C();
            crc.update(slot.duplicate().position(0).limit(ControlFile.CRC_OFFSET));
            boolean intact = slot.getLong(ControlFile.MAGIC_OFFSET) == ControlFile.MAGIC
                    && slot.getInt(ControlFile.VERSION_OFFSET) == ControlFile.VERSION
                    && slot.getInt(ControlFile.CRC_OFFSET) == (int) crc.getValue()
                    && slot.getLong(ControlFile.SEQUENCE_OFFSET) == sequences[i]
                    && Arrays.equals(image, i * ControlFile.SLOT_SIZE, (i + 1) * ControlFile.SLOT_SIZE,
                    file.array(), i * ControlFile.SLOT_SIZE, (i + 1) * ControlFile.SLOT_SIZE);
            if (intact && (expected == null || sequences[i] > best)) {
                expected = written[i];
                best = sequences[i];
            }
        }

        ControlFile.Checkpoint cp;
        try (ControlFile cf = ControlFile.open(cfDir)) {
            cp = cf.read();
        } catch (IOException refused) {
            assertThat(expected).as("refused although a slot is valid").isNull();
            return;
        }
        if (expected != null) {
            assertThat(cp).isEqualTo(expected);
        }
        try (ControlFile rewritten = ControlFile.create(cfDir, cp)) {
            assertThat(rewritten.read()).isEqualTo(cp);
        }
    }

    /** The history file either yields a valid history that survives being written back, or is refused as corrupt. */
    @FuzzTest(maxDuration = "5s")
    void historyFileReadsAsAValidHistoryOrIsRefused(byte[] bytes) throws IOException {
        setUp();
        Path historyDir = dir.resolve("history");
        Files.createDirectories(historyDir);
        Files.write(historyDir.resolve(HistoryFile.NAME), bytes);
        HistoryFile.Stored stored;
        try {
            stored = HistoryFile.readStored(historyDir);
        } catch (WalCorruptedException refused) {
            assertThat(refused.getMessage()).contains(HistoryFile.NAME);
            return;
        }
        EpochHistory history = stored.history();
        assertThat(EpochHistory.of(history.epochs())).isEqualTo(history);
        HistoryFile.write(historyDir, history, stored.begunHere());
        assertThat(HistoryFile.readStored(historyDir)).isEqualTo(stored);
    }

    /** Counts the records from the segment's first to {@code end}, each checked with the exact prev link of the chain. */
    private static long walkValidChain(long end) {
        ByteBuffer view = segment.newView();
        CRC32C crc = new CRC32C();
        long prev = -1;
        long at = SegmentHeaderDescriptor.LENGTH;
        long records = 0;
        while (at < Math.min(end, SEGMENT)) {
            assertThat(RecordCheck.check(view, 0, crc, at, prev)).as("record at %s", Lsn.format(at)).isEqualTo(RecordCheck.VALID);
            prev = at;
            at += RecordDescriptor.aligned(view.order(ByteOrder.LITTLE_ENDIAN).getInt((int) at));
            records++;
        }
        assertThat(at == end || (at == SEGMENT && end == SEGMENT + SegmentHeaderDescriptor.LENGTH)).as("ends at a boundary").isTrue();
        return records;
    }

    private static void write(byte[] file) throws IOException {
        try (FileChannel ch = FileChannel.open(segment.path(), StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.wrap(file);
            while (b.hasRemaining()) {
                ch.write(b, b.position());
            }
        }
    }

    private static byte[] read() throws IOException {
        return Arrays.copyOf(Files.readAllBytes(segment.path()), (int) SEGMENT);
    }

    private static void deleteQuietly(Path root) {
        try (var paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temporary directory: the OS cleans it eventually
        }
    }
}
