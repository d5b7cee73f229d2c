package io.walden.core.internal.record;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The payload of a control record (docs/format.md, "Control records"): a cursor set to an LSN, or deleted; or a zstd
 * dictionary that records after it in the same segment may be compressed with.
 *
 * <pre>
 *   0      1  kind: 1 = cursor set, 2 = cursor deleted
 *   1      1  name length n (1..64)
 *   2      n  name: ASCII letters, digits, '.', '_', '-'
 *   2+n    8  LSN, little-endian (0 for a delete)
 *
 *   0      1  kind: 3 = zstd dictionary
 *   1      3  zero
 *   4      4  the dictionary's zstd id (u32, little-endian; not 0)
 *   8      -  the dictionary, in zstd's format
 * </pre>
 *
 * <p>Thread-safety: stateless.
 */
public final class ControlRecord {
    public static final int CURSOR_SET = 1;
    public static final int CURSOR_DELETED = 2;
    public static final int ZSTD_DICTIONARY = 3;
    public static final int MAX_NAME = 64;
    /** Bytes before a dictionary's own in its control record. */
    public static final int DICTIONARY_HEADER = 8;

    /** A decoded control record. */
    public record Cursor(int kind, String name, long lsn) {
    }

    private ControlRecord() {
    }

    /** Whether {@code name} may name a cursor: 1 to 64 of {@code A-Z a-z 0-9 . _ -}. */
    public static boolean isValidName(String name) {
        if (name == null || name.isEmpty() || name.length() > MAX_NAME) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-')) {
                return false;
            }
        }
        return true;
    }

    public static byte[] encode(int kind, String name, long lsn) {
        byte[] n = name.getBytes(StandardCharsets.US_ASCII);
        return ByteBuffer.allocate(2 + n.length + Long.BYTES).order(ByteOrder.LITTLE_ENDIAN)
                .put((byte) kind).put((byte) n.length).put(n).putLong(lsn).array();
    }

    /** Whether a control record's payload (position to limit; not moved) is of the dictionary kind. */
    public static boolean isDictionary(ByteBuffer payload) {
        return payload.remaining() > DICTIONARY_HEADER && (payload.get(payload.position()) & 0xFF) == ZSTD_DICTIONARY;
    }

    public static byte[] encodeDictionary(long id, byte[] dictionary) {
        return ByteBuffer.allocate(DICTIONARY_HEADER + dictionary.length).order(ByteOrder.LITTLE_ENDIAN)
                .put((byte) ZSTD_DICTIONARY).put((byte) 0).putShort((short) 0).putInt((int) id).put(dictionary).array();
    }

    /**
     * @param payload a control record's payload (position to limit; not moved)
     * @return the zstd dictionary it stores, or null when it stores none, or one whose id field does not match the
     *         dictionary's own (damage the CRC could not see if the writer was broken: never used to decode anything)
     */
    public static ZstdDictionary decodeDictionary(ByteBuffer payload) {
        if (!isDictionary(payload)) {
            return null;
        }
        ByteBuffer b = payload.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        long id = b.getInt(b.position() + 4) & 0xFFFF_FFFFL;
        byte[] bytes = new byte[b.remaining() - DICTIONARY_HEADER];
        b.get(b.position() + DICTIONARY_HEADER, bytes);
        ZstdDictionary d = ZstdDictionary.of(bytes);
        return d != null && d.id() == id ? d : null;
    }

    /**
     * Whether whole records in {@code records} (position to limit; not moved) include a control record other than a
     * dictionary (a cursor change, or a kind this version does not know): a hint.
     */
    public static boolean anyCursorChangeIn(ByteBuffer records) {
        ByteBuffer b = records.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int at = b.position();
        while (at + RecordDescriptor.HEADER_LENGTH <= b.limit()) {
            int length = b.getInt(at + RecordDescriptor.LENGTH_OFFSET);
            if (length < RecordDescriptor.HEADER_LENGTH || length > b.limit() - at) {
                return false; // not records (they are validated later): no hint
            }
            int flags = b.getShort(at + RecordDescriptor.FLAGS_OFFSET);
            int payloadAt = RecordDescriptor.payloadOffset(flags);
            if ((flags & RecordDescriptor.FLAG_CONTROL) != 0
                    && (length <= payloadAt || (b.get(at + payloadAt) & 0xFF) != ZSTD_DICTIONARY)) {
                return true;
            }
            at += (int) RecordDescriptor.aligned(length);
        }
        return false;
    }

    /**
     * @param payload the record's payload (position to limit; not moved)
     * @return the cursor change, or null when the payload is not one (a dictionary, or a newer writer's control
     *         record: skipped, so that a log written by a newer version still opens)
     */
    public static Cursor decode(ByteBuffer payload) {
        ByteBuffer b = payload.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        if (b.remaining() < 2) {
            return null;
        }
        int kind = b.get() & 0xFF;
        int length = b.get() & 0xFF;
        if ((kind != CURSOR_SET && kind != CURSOR_DELETED) || b.remaining() != length + Long.BYTES) {
            return null;
        }
        byte[] n = new byte[length];
        b.get(n);
        String name = new String(n, StandardCharsets.US_ASCII);
        return isValidName(name) ? new Cursor(kind, name, b.getLong()) : null;
    }
}
