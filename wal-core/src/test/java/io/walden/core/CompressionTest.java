package io.walden.core;

import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.recovery.LogInspector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Record compression (docs/format.md, "Compressed payloads"): a payload is stored compressed, per append or by the
 * log's default, only when that saves space; readers, recovery, replication and the inspector give back the
 * original bytes; a compressed payload that passes its CRC but not its codec is reported as corruption, never
 * returned.
 */
class CompressionTest {
    @TempDir
    Path work;

    /** A JSON event of about 1 KiB: what the users' event stores hold. */
    static byte[] jsonEvent(int i) {
        StringBuilder b = new StringBuilder("{\"event\":\"order-placed\",\"sequence\":").append(i).append(",\"lines\":[");
        for (int line = 0; line < 12; line++) {
            b.append(line == 0 ? "" : ",").append("{\"sku\":\"SKU-").append(1000 + line * 7 + i % 5)
                    .append("\",\"quantity\":").append(1 + line % 3).append(",\"currency\":\"EUR\",\"unit_price\":")
                    .append(9.99 + line).append('}');
        }
        return b.append("]}").toString().getBytes(StandardCharsets.UTF_8);
    }

    private static long storedBytes(Wal wal, Runnable append) {
        long before = wal.insertLsn();
        append.run();
        return wal.insertLsn() - before;
    }

    @ParameterizedTest
    @EnumSource(value = Compression.class, names = {"LZ4", "ZSTD"})
    void aCompressiblePayloadIsStoredSmallerAndReadBackUnchanged(Compression codec) {
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            byte[] event = jsonEvent(7);
            long plain = storedBytes(wal, () -> wal.append(0, event, 0, event.length, Durability.LOCAL, Compression.NONE));
            long lsn = wal.insertLsn();
            long stored = storedBytes(wal, () -> wal.append(0, event, 0, event.length, Durability.LOCAL, codec));
            assertThat(stored).as("%s record bytes vs %d plain", codec, plain).isLessThan(plain / 2);
            try (WalReader r = wal.reader(lsn)) {
                WalRecord rec = r.next();
                assertThat(rec.payload()).isEqualTo(event);
                assertThat(rec.size()).isEqualTo(event.length);
                assertThat(rec.payloadView().remaining()).isEqualTo(event.length);
            }
        }
    }

    @Test
    void aPayloadTheCodecCannotShrinkIsStoredAsItIs() {
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            byte[] random = new byte[1000];
            new Random(1).nextBytes(random);
            long stored = storedBytes(wal, () -> wal.append(0, random, 0, random.length, Durability.OFF, Compression.ZSTD));
            assertThat(stored).isEqualTo(RecordDescriptor.aligned(RecordDescriptor.recordLength(1000)));
            assertThat(only(wal).compression()).isEqualTo(Compression.NONE);
        }
    }

    @Test
    void aPayloadShorterThanTheMinimumIsNeverCompressed() {
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            byte[] small = "a".repeat(Compression.MIN_PAYLOAD - 1).getBytes(StandardCharsets.UTF_8);
            long stored = storedBytes(wal, () -> wal.append(0, small, 0, small.length, Durability.OFF, Compression.LZ4));
            assertThat(stored).isEqualTo(RecordDescriptor.aligned(RecordDescriptor.recordLength(small.length)));
        }
    }

    @Test
    void theLogsDefaultAppliesToAppendsThatChooseNoneAndAnAppendMayOverrideIt() {
        try (Wal wal = Wal.open(TestLogs.small(work).compression(Compression.ZSTD).build())) {
            byte[] event = jsonEvent(1);
            wal.append(event, Durability.OFF);
            wal.append(0, ByteBuffer.wrap(event), Durability.OFF);
            wal.append(0, event, 0, event.length, Durability.OFF, Compression.NONE);
            wal.flush();
            List<LogInspector.RecordInfo> records = inspect(work);
            assertThat(records).extracting(LogInspector.RecordInfo::compression)
                    .containsExactly(Compression.ZSTD, Compression.ZSTD, Compression.NONE);
            assertThat(records).allSatisfy(r -> assertThat(r.uncompressedLength()).isEqualTo(event.length));
        }
    }

    @ParameterizedTest
    @EnumSource(value = Compression.class, names = {"LZ4", "ZSTD"})
    void aDirectBufferIsCompressedLikeAnArray(Compression codec) {
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            byte[] event = jsonEvent(3);
            ByteBuffer direct = ByteBuffer.allocateDirect(event.length + 10);
            direct.position(10);
            direct.put(event).position(10);
            long lsn = wal.append(0, direct, Durability.OFF, codec);
            assertThat(direct.position()).as("the buffer's position is not moved").isEqualTo(10);
            wal.flush();
            try (WalReader r = wal.reader(lsn)) {
                assertThat(r.next().payload()).isEqualTo(event);
            }
            assertThat(only(wal).compression()).isEqualTo(codec);
        }
    }

    @Test
    void compressedRecordsAreReadBackAfterTheLogIsReopened() {
        List<byte[]> events = new ArrayList<>();
        long first;
        try (Wal wal = Wal.open(TestLogs.small(work).compression(Compression.LZ4).build())) {
            first = wal.insertLsn();
            for (int i = 0; i < 300; i++) { // several 64 KiB segments
                events.add(jsonEvent(i));
                wal.append(events.get(i), Durability.OFF);
            }
        }
        try (Wal wal = Wal.open(TestLogs.small(work).build()); WalReader r = wal.reader(first)) {
            for (byte[] event : events) {
                assertThat(r.next().payload()).isEqualTo(event);
            }
            assertThat(r.next()).isNull();
        }
    }

    @Test
    void aReplicaHoldsCompressedRecordsByteForByteAndReadsThemBack() {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).compression(Compression.ZSTD).build());
             Wal replica = Replicas.open(primary, work.resolve("replica"))) {
            long first = primary.insertLsn();
            for (int i = 0; i < 50; i++) {
                primary.append(jsonEvent(i), Durability.LOCAL);
            }
            Replicas.catchUp(primary, replica);
            try (WalReader r = replica.reader(first)) {
                for (int i = 0; i < 50; i++) {
                    assertThat(r.next().payload()).isEqualTo(jsonEvent(i));
                }
            }
            assertThat(replica.insertLsn()).isEqualTo(primary.insertLsn());
        }
    }

    @Test
    void aCompressedPayloadThatPassesItsCrcButNotItsCodecIsReportedAsCorruptionAndNeverReturned() throws IOException {
        long good;
        long bad;
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            good = wal.append(0, jsonEvent(1), 0, jsonEvent(1).length, Durability.LOCAL, Compression.LZ4);
            bad = wal.append(0, jsonEvent(2), 0, jsonEvent(2).length, Durability.LOCAL, Compression.LZ4);
        }
        // Damage the codec's bytes (not the length prefix), then make the CRC match again: only the codec can tell.
        forgeStoredPayload(work, bad, stored -> {
            for (int i = RecordDescriptor.COMPRESSED_PREFIX; i < stored.length; i++) {
                stored[i] = (byte) 0xFF;
            }
        });
        try (Wal wal = Wal.open(TestLogs.small(work).build()); WalReader r = wal.reader(good)) {
            assertThat(r.next().payload()).isEqualTo(jsonEvent(1));
            assertThatThrownBy(r::next).isInstanceOf(WalCorruptedException.class)
                    .hasMessageContaining(Lsn.format(bad)).hasMessageContaining("cannot be restored");
            assertThat(r.position()).as("the reader stays on the damaged record").isEqualTo(bad);
            assertThatThrownBy(r::next).isInstanceOf(WalCorruptedException.class);
        }
        LogInspector.Result result = new LogInspector(work).inspect(new LogInspector.Visitor() {
        });
        assertThat(result.clean()).isFalse();
        assertThat(result.problemLsn()).isEqualTo(bad);
        assertThat(result.problem()).contains("cannot be restored");
    }

    @Test
    void anUncompressedLengthBeyondTheMaximumPayloadIsReportedAsCorruption() throws IOException {
        long bad;
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            bad = wal.append(0, jsonEvent(2), 0, jsonEvent(2).length, Durability.LOCAL, Compression.ZSTD);
        }
        forgeStoredPayload(work, bad, stored -> ByteBuffer.wrap(stored).order(ByteOrder.LITTLE_ENDIAN).putInt(0, Integer.MAX_VALUE));
        try (Wal wal = Wal.open(TestLogs.small(work).build()); WalReader r = wal.reader(bad)) {
            assertThatThrownBy(r::next).isInstanceOf(WalCorruptedException.class).hasMessageContaining("exceeds the maximum payload");
        }
    }

    // ------------------------------------------------------------------ helpers

    private static LogInspector.RecordInfo only(Wal wal) {
        wal.flush();
        List<LogInspector.RecordInfo> records = inspect(wal.directory());
        assertThat(records).hasSize(1);
        return records.get(0);
    }

    private static List<LogInspector.RecordInfo> inspect(Path dir) {
        List<LogInspector.RecordInfo> out = new ArrayList<>();
        try {
            new LogInspector(dir).inspect(new LogInspector.Visitor() {
                @Override
                public boolean onRecord(LogInspector.RecordInfo r) {
                    if (!r.padding()) {
                        out.add(r);
                    }
                    return true;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /** Rewrites the stored payload of the record at {@code lsn} in place and recomputes its CRC (docs/format.md). */
    static void forgeStoredPayload(Path dir, long lsn, Consumer<byte[]> change) throws IOException {
        Path segment;
        try (Stream<Path> files = Files.list(dir)) {
            segment = files.filter(p -> p.getFileName().toString().endsWith(".wal")).sorted()
                    .filter(p -> Long.parseLong(p.getFileName().toString().substring(0, 16), 16) <= lsn)
                    .reduce((a, b) -> b).orElseThrow();
        }
        long offset = lsn - Long.parseLong(segment.getFileName().toString().substring(0, 16), 16);
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer lengthWord = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(lengthWord, offset);
            int length = lengthWord.getInt(0);
            ByteBuffer record = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(record, offset);
            byte[] stored = new byte[length - RecordDescriptor.TIMED_HEADER_LENGTH];
            record.get(RecordDescriptor.TIMED_HEADER_LENGTH, stored);
            change.accept(stored);
            record.put(RecordDescriptor.TIMED_HEADER_LENGTH, stored);
            CRC32C crc = new CRC32C();
            crc.update(record.array(), RecordDescriptor.CRC_COVERAGE_OFFSET, length - RecordDescriptor.CRC_COVERAGE_OFFSET);
            crc.update(record.array(), RecordDescriptor.LENGTH_OFFSET, 4);
            record.putInt(RecordDescriptor.CRC_OFFSET, (int) crc.getValue());
            ch.write(record.flip(), offset);
            ch.force(false);
        }
    }
}
