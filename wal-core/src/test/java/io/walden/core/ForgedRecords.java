package io.walden.core;

import io.walden.core.internal.record.RecordCheck;
import io.walden.core.internal.record.RecordDescriptor;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * Bytes laid out as a well-formed record (docs/format.md, "Record": length, CRC-32C over the rest, prev link,
 * type, flags), for tests that hide one inside a payload: whatever a reader is pointed at, only a proven record
 * boundary may be read from.
 */
public final class ForgedRecords {
    private ForgedRecords() {
    }

    /** A whole record (header and payload, padded to the alignment) whose CRC checks out and whose prev link is {@code prev}. */
    public static byte[] record(long prev, int type, byte[] data) {
        int length = RecordDescriptor.HEADER_LENGTH + data.length;
        ByteBuffer b = ByteBuffer.allocate((int) RecordDescriptor.aligned(length) + RecordDescriptor.HEADER_LENGTH)
                .order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(RecordDescriptor.LENGTH_OFFSET, length);
        b.putLong(RecordDescriptor.PREV_OFFSET, prev);
        b.putShort(RecordDescriptor.TYPE_OFFSET, (short) type);
        b.put(RecordDescriptor.HEADER_LENGTH, data);
        b.putInt(RecordDescriptor.CRC_OFFSET, RecordCheck.crc(b, new CRC32C(), 0, length));
        byte[] out = new byte[(int) RecordDescriptor.aligned(length)];
        b.get(0, out);
        return out;
    }
}
