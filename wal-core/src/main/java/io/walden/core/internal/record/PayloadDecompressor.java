package io.walden.core.internal.record;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdDecompressCtx;
import com.github.luben.zstd.ZstdException;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Restores a compressed payload (docs/format.md, "Compressed payloads") into this instance's buffer. The stored
 * bytes passed the record's CRC, so a failure here means they were written corrupt, or by something else than
 * Walden: the caller reports it as corruption of that record and never returns the bytes.
 *
 * <p>Thread-safety: none; one per reader. The returned view is valid until the next call. {@link #close} frees the
 * native codec contexts (zstd-jni does not free them on garbage collection): the reader's owner closes it.
 */
public final class PayloadDecompressor implements AutoCloseable {
    /** The safe decompressor: it never reads or writes outside the buffers, whatever the input. */
    private static final LZ4SafeDecompressor LZ4 = LZ4Factory.fastestInstance().safeDecompressor();

    private byte[] in = new byte[0];
    private byte[] out = new byte[0];
    private ZstdDecompressCtx zstd;
    /** Frames that name a dictionary: a context keeps the dictionary it was given, and must not use it for others. */
    private ZstdDecompressCtx zstdWithDictionary;
    private ZstdDictionary loaded;

    /** Why the last {@link #decompress} returned null. */
    private String failure;

    /**
     * @param codec    the record's {@link RecordDescriptor#CODEC_MASK} bits (not 0)
     * @param stored   the stored payload (position to limit; not moved): the uncompressed length, then the codec's bytes
     * @param maxLength the largest uncompressed length accepted (the log's maximum payload)
     * @return a read-only little-endian view of the original payload, or null when it cannot be restored
     *         ({@link #failure()} says why)
     */
    public ByteBuffer decompress(int codec, ByteBuffer stored, int maxLength) {
        return decompress(codec, stored, maxLength, DictionaryLookup.NONE);
    }

    /**
     * {@link #decompress(int, ByteBuffer, int)} for a record that may be compressed with a zstd dictionary:
     * {@code dictionaries} finds the one its frame names (docs/format.md, "zstd dictionaries"); a frame that names one
     * it cannot find cannot be restored.
     */
    public ByteBuffer decompress(int codec, ByteBuffer stored, int maxLength, DictionaryLookup dictionaries) {
        int storedLength = stored.remaining() - RecordDescriptor.COMPRESSED_PREFIX;
        int length = stored.order(ByteOrder.LITTLE_ENDIAN).getInt(stored.position());
        if (length < 0 || length > maxLength) {
            failure = "its uncompressed length " + Integer.toUnsignedString(length) + " exceeds the maximum payload " + maxLength;
            return null;
        }
        if (in.length < storedLength) {
            in = new byte[Math.max(storedLength, in.length * 2)];
        }
        stored.get(stored.position() + RecordDescriptor.COMPRESSED_PREFIX, in, 0, storedLength);
        if (out.length < length) {
            out = new byte[Math.max(length, Math.min(maxLength, out.length * 2))];
        }
        int n;
        try {
            if (codec == RecordDescriptor.CODEC_LZ4) {
                n = LZ4.decompress(in, 0, storedLength, out, 0, length);
            } else if (codec == RecordDescriptor.CODEC_ZSTD) {
                ZstdDecompressCtx ctx = zstdFor(Zstd.getDictIdFromFrame(in), dictionaries);
                if (ctx == null) {
                    return null;
                }
                n = ctx.decompressByteArray(out, 0, length, in, 0, storedLength);
            } else {
                failure = "unknown codec bits " + codec;
                return null;
            }
        } catch (LZ4Exception | ZstdException e) {
            failure = "the " + (codec == RecordDescriptor.CODEC_LZ4 ? "LZ4" : "zstd") + " payload cannot be decoded: " + e.getMessage();
            return null;
        }
        if (n != length) {
            failure = "it decodes to " + n + " bytes, not the " + length + " its prefix says";
            return null;
        }
        return ByteBuffer.wrap(out, 0, length).slice().asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** The context for a frame that names dictionary {@code id} (0: none); null when that dictionary is not found. */
    private ZstdDecompressCtx zstdFor(long id, DictionaryLookup dictionaries) {
        if (id == 0) {
            if (zstd == null) {
                zstd = new ZstdDecompressCtx();
            }
            return zstd;
        }
        ZstdDictionary d = dictionaries.find(id); // asked every time: a log's inspection holds each segment to the rule
        if (d == null) {
            failure = "its zstd frame names dictionary " + id + ", which its segment does not hold before it";
            return null;
        }
        if (zstdWithDictionary == null) {
            zstdWithDictionary = new ZstdDecompressCtx();
        }
        if (loaded != d) {
            zstdWithDictionary.loadDict(d.forDecompression());
            loaded = d;
        }
        return zstdWithDictionary;
    }

    @Override
    public void close() {
        if (zstd != null) {
            zstd.close();
            zstd = null;
        }
        if (zstdWithDictionary != null) {
            zstdWithDictionary.close();
            zstdWithDictionary = null;
            loaded = null;
        }
    }

    public String failure() {
        return failure;
    }
}
