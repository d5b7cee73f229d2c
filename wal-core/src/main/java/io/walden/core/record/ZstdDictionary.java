package io.walden.core.record;

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
    private final byte[] controlPayload;
    private final ZstdDictCompress compress;
    private final ZstdDictDecompress decompress;

    private ZstdDictionary(long id, byte[] bytes) {
        this.id = id;
        this.controlPayload = ControlRecord.encodeDictionary(id, bytes);
        this.compress = new ZstdDictCompress(bytes, PayloadCompressor.ZSTD_LEVEL);
        this.decompress = new ZstdDictDecompress(bytes);
    }

    /**
     * @param bytes a dictionary in zstd's format (as zstd's trainer makes it)
     * @return the dictionary, or null when the bytes are not a zstd dictionary with a non-zero id (a raw-content
     *         dictionary has no id a frame could name)
     */
    public static ZstdDictionary of(byte[] bytes) {
        long id = Zstd.getDictIdFromDict(bytes);
        return id == 0 ? null : new ZstdDictionary(id, bytes);
    }

    /** The id zstd writes into each frame compressed with this dictionary (unsigned 32 bits). */
    public long id() {
        return id;
    }

    /** The payload of the control record that stores this dictionary (ControlRecord.ZSTD_DICTIONARY). */
    public byte[] controlPayload() {
        return controlPayload;
    }

    int size() {
        return controlPayload.length - ControlRecord.DICTIONARY_HEADER;
    }

    ZstdDictCompress forCompression() {
        return compress;
    }

    ZstdDictDecompress forDecompression() {
        return decompress;
    }
}
