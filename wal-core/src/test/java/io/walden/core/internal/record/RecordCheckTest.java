package io.walden.core.internal.record;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;

/** A record's CRC (docs/format.md, "CRC coverage"), as the append path computes it. */
class RecordCheckTest {
    /** The definition, byte by byte: CRC-32C of bytes [8, length), then the length word's four little-endian bytes. */
    private static int byDefinition(byte[] record, int length) {
        CRC32C crc = new CRC32C();
        crc.update(record, RecordDescriptor.CRC_COVERAGE_OFFSET, length - RecordDescriptor.CRC_COVERAGE_OFFSET);
        for (int i = 0; i < Integer.BYTES; i++) {
            crc.update(length >>> (8 * i));
        }
        return (int) crc.getValue();
    }

    @Test
    void shouldComputeTheCrcOfItsDefinitionForEveryLengthAndContent() {
        SplittableRandom random = new SplittableRandom(39);
        ByteBuffer view = ByteBuffer.allocateDirect(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        CRC32C crc = new CRC32C();
        for (int i = 0; i < 20_000; i++) {
            // every small length, then lengths whose four bytes all vary (up to a 64 KiB view)
            int length = i < 2_000 ? RecordDescriptor.HEADER_LENGTH + i % 600 : 24 + random.nextInt(view.capacity() - 24 - 64);
            int offset = 8 * random.nextInt(8);
            byte[] record = new byte[length];
            random.nextBytes(record);
            view.put(offset, record);
            assertThat(RecordCheck.crc(view, crc, offset, length)).isEqualTo(byDefinition(record, length));
            assertThat(view.position()).isZero();
            assertThat(view.limit()).isEqualTo(view.capacity());
        }
    }

    @Test
    void shouldContinueACrcOverTheLengthsFourBytesForEveryByteValue() {
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 100_000; i++) {
            int before = random.nextInt();
            int length = i < 1024 ? (i & 0xFF) << (8 * (i >>> 8)) : random.nextInt();
            CRC32C crc = new CRC32C();
            crc.update(new byte[] {(byte) before, (byte) (before >>> 8), (byte) (before >>> 16), (byte) (before >>> 24)});
            int value = (int) crc.getValue();
            for (int b = 0; b < Integer.BYTES; b++) {
                crc.update(length >>> (8 * b));
            }
            assertThat(RecordCheck.withLength(value, length)).isEqualTo((int) crc.getValue());
        }
    }
}
