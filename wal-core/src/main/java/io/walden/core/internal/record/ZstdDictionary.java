package io.walden.core.internal.record;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdDictCompress;
import com.github.luben.zstd.ZstdDictDecompress;

/**
 * A zstd dictionary the log carries in its own segments (docs/format.md, "zstd dictionaries"): its id (the one zstd
 * writes into every frame compressed with it), its bytes, the control record payload that stores it, and the digested
 * forms zstd compresses and decompresses with. Immutable.
 *
 * <p>Thread-safety: immutable; the digested forms may be referenced by any number of codec contexts at once (zstd
 * only reads them).
 */
public final class ZstdDictionary {
    private final long id;
    private final byte[] bytes;
    private final byte[] controlPayload;
    private final ZstdDictDecompress decompress;
    /** Built at the first compression (only a writer needs it), at the level of the log that writes. */
    private volatile Digested compress;

    private ZstdDictionary(long id, byte[] bytes) {
        this.id = id;
        this.bytes = bytes;
        this.controlPayload = ControlRecord.encodeDictionary(id, bytes);
        this.decompress = new ZstdDictDecompress(bytes);
    }

    /**
     * @param bytes a dictionary in zstd's format (as zstd's trainer makes it)
     * @return the dictionary, or null when the bytes are not a zstd dictionary with a non-zero id (a raw-content
     *         dictionary has no id a frame could name), or zstd refuses them
     */
    public static ZstdDictionary of(byte[] bytes) {
        long id = Zstd.getDictIdFromDict(bytes);
        if (id == 0) {
            return null;
        }
        try {
            return new ZstdDictionary(id, bytes);
        } catch (RuntimeException e) {
            return null; // damage the CRC could not see (a broken writer): never a dictionary
        }
    }

    /** The id zstd writes into each frame compressed with this dictionary (unsigned 32 bits). */
    public long id() {
        return id;
    }

    /** The payload of the control record that stores this dictionary (ControlRecord.ZSTD_DICTIONARY). */
    public byte[] controlPayload() {
        return controlPayload;
    }

    public int size() {
        return controlPayload.length - ControlRecord.DICTIONARY_HEADER;
    }

    /** The form zstd compresses with at {@code level}, built on first use; throws when zstd refuses the bytes (see {@link DictionaryTrainer#adopt}). */
    public ZstdDictCompress forCompression(int level) {
        Digested d = compress;
        if (d == null || d.level != level) {
            synchronized (this) {
                d = compress;
                if (d == null || d.level != level) { // one log writes at one level: built once in practice
                    compress = d = new Digested(level, new ZstdDictCompress(bytes, level));
                }
            }
        }
        return d.dictionary;
    }

    /** zstd's digested form bakes a level in: it is kept with it. */
    private record Digested(int level, ZstdDictCompress dictionary) {
    }

    public ZstdDictDecompress forDecompression() {
        return decompress;
    }
}
