package io.walden.core.internal.record;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import io.walden.core.Compression;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Compresses a payload into this instance's buffer as docs/format.md ("Compressed payloads") stores it: the
 * uncompressed length (u32, little-endian), then the codec's bytes. Keeps its buffers and codec contexts between
 * calls, so that compressing allocates nothing once they have grown to the largest payload seen.
 *
 * <p>Thread-safety: none; one per appending thread. {@link #close} frees the native codec contexts (zstd-jni does not
 * free them on garbage collection).
 */
public final class PayloadCompressor implements AutoCloseable {
    /**
     * The log's default level: on small records (JSON events, with or without the log's dictionary) level 1 stores
     * within 2 % of zstd's own default, 3, for less CPU, and on the append path that CPU is the committers' (docs/benchmarks.md).
     */
    private static final LZ4Compressor LZ4 = LZ4Factory.fastestInstance().fastCompressor();

    private byte[] in = new byte[0];
    private byte[] out = new byte[0];
    private ByteBuffer outView = ByteBuffer.wrap(out);
    private ZstdCompressCtx zstd;
    /** A second context for dictionary frames: a context keeps the dictionary it was given for every frame after. */
    private ZstdCompressCtx zstdWithDictionary;
    private ZstdDictionary loaded;
    private int storedLength;
    private boolean usedDictionary;
    private final int zstdLevel;

    /** @param zstdLevel the level of zstd frames (WalConfig.Builder.zstdLevel) */
    public PayloadCompressor(int zstdLevel) {
        this.zstdLevel = zstdLevel;
    }

    /**
     * Compresses {@code length} bytes of {@code src} from {@code offset} with {@code codec}.
     *
     * @return the record flag of the codec used, with the stored bytes in {@link #stored()} ({@link #storedLength()}
     *         of them); or 0 when the payload is better stored as it is (too short, or shrunk by less than an eighth)
     */
    public int compress(Compression codec, byte[] src, int offset, int length) {
        return compress(codec, src, offset, length, null);
    }

    /**
     * {@link #compress(Compression, byte[], int, int)}; a zstd payload is compressed with {@code dictionary} when it is
     * not null ({@link #usedDictionary()} then says so: the frame names the dictionary's id, and only a reader that
     * finds that dictionary can restore it).
     */
    public int compress(Compression codec, byte[] src, int offset, int length, ZstdDictionary dictionary) {
        usedDictionary = false;
        if (codec == Compression.NONE || length < Compression.MIN_PAYLOAD) {
            return 0;
        }
        int bound = RecordDescriptor.COMPRESSED_PREFIX + (codec == Compression.LZ4
                ? LZ4.maxCompressedLength(length) : (int) Math.min(Integer.MAX_VALUE - 16, Zstd.compressBound(length)));
        if (out.length < bound) {
            out = new byte[Math.max(bound, out.length * 2)];
            outView = ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN);
        }
        int n;
        if (codec == Compression.LZ4) {
            n = LZ4.compress(src, offset, length, out, RecordDescriptor.COMPRESSED_PREFIX, out.length - RecordDescriptor.COMPRESSED_PREFIX);
        } else {
            n = zstdFor(dictionary).compressByteArray(out, RecordDescriptor.COMPRESSED_PREFIX,
                    out.length - RecordDescriptor.COMPRESSED_PREFIX, src, offset, length);
        }
        int stored = RecordDescriptor.COMPRESSED_PREFIX + n;
        if (stored > length - length / 8) {
            return 0; // saves too little to be worth a decompression on every read
        }
        outView.putInt(0, length);
        storedLength = stored;
        usedDictionary = codec == Compression.ZSTD && dictionary != null;
        return codec == Compression.LZ4 ? RecordDescriptor.CODEC_LZ4 : RecordDescriptor.CODEC_ZSTD;
    }

    private ZstdCompressCtx zstdFor(ZstdDictionary dictionary) {
        if (dictionary == null) {
            if (zstd == null) {
                zstd = new ZstdCompressCtx().setLevel(zstdLevel);
            }
            return zstd;
        }
        if (zstdWithDictionary == null) {
            zstdWithDictionary = new ZstdCompressCtx().setLevel(zstdLevel);
        }
        if (loaded != dictionary) {
            zstdWithDictionary.loadDict(dictionary.forCompression(zstdLevel)); // by reference: nothing copied
            loaded = dictionary;
        }
        return zstdWithDictionary;
    }

    /** Whether the last successful {@link #compress} used the dictionary it was given. */
    public boolean usedDictionary() {
        return usedDictionary;
    }

    /**
     * The remaining bytes of {@code src} (its position unchanged) as an array region: the buffer's own array, or a
     * copy in this instance's staging array (valid until the next call). Returns the array; the region starts at
     * {@link #stagedOffset()}.
     */
    public byte[] stage(ByteBuffer src) {
        int length = src.remaining();
        if (src.hasArray()) {
            stagedOffset = src.arrayOffset() + src.position();
            return src.array();
        }
        if (in.length < length) {
            in = new byte[Math.max(length, in.length * 2)];
        }
        src.get(src.position(), in, 0, length);
        stagedOffset = 0;
        return in;
    }

    private int stagedOffset;

    public int stagedOffset() {
        return stagedOffset;
    }

    /** {@link #compress(Compression, byte[], int, int)} for the remaining bytes of a buffer (its position unchanged). */
    public int compress(Compression codec, ByteBuffer src) {
        if (codec == Compression.NONE || src.remaining() < Compression.MIN_PAYLOAD) {
            usedDictionary = false;
            return 0;
        }
        byte[] array = stage(src);
        return compress(codec, array, stagedOffset, src.remaining());
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

    /** The stored bytes of the last successful {@link #compress}: valid until the next call. */
    public byte[] stored() {
        return out;
    }

    public int storedLength() {
        return storedLength;
    }
}
