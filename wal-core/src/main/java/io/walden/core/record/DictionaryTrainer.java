package io.walden.core.record;

import com.github.luben.zstd.Zstd;
import io.walden.core.thread.WaldenThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;

/**
 * The writer's zstd dictionary (docs/format.md, "zstd dictionaries"): one the log already holds ({@link #adopt}), or
 * else one trained here. The first zstd payloads a log appends after it opens are copied as samples (a fixed budget, into one buffer allocated at the first sample), and once the budget is
 * full a background thread trains a dictionary on them with zstd's trainer. From then on {@link #active()} returns it
 * and small zstd payloads are compressed with it; until then they are compressed alone. A training that fails (too
 * few or too uniform samples) leaves the log without a dictionary until it is opened again: never an error.
 *
 * <p>Sizes follow the segment (a dictionary must fit beside the records it serves in every segment): a dictionary of
 * up to 16 KiB, trained on up to 1 MiB of samples, used for payloads of up to 64 KiB (larger ones carry enough
 * context of their own).
 *
 * <p>Thread-safety: {@link #offer} and {@link #active} from any number of appending threads. Sampling takes a lock
 * (only until the budget is full); afterwards {@link #offer} is one volatile read. The dictionary is published with a
 * volatile write after it is built.
 */
public final class DictionaryTrainer {
    private static final Logger LOG = LoggerFactory.getLogger(DictionaryTrainer.class);
    private static final int MAX_DICTIONARY = 16 << 10;
    private static final int MIN_DICTIONARY = 1 << 10;
    private static final int MAX_SAMPLES_BYTES = 1 << 20;
    private static final int MAX_DICTIONARY_PAYLOAD = 64 << 10;

    private final int dictionarySize;
    private final int samplesBytes;
    private final int maxPayload;
    private final String logName;
    /** Whether this log uses dictionaries: enabled, and its segments and maximum payload are large enough. */
    private final boolean enabled;
    private volatile boolean sampling;
    private volatile ZstdDictionary active;
    /** Guarded by this. */
    private ByteBuffer samples;
    private int[] sampleSizes;
    private int sampleCount;

    /**
     * @param enabled        whether the log uses dictionaries at all (WalConfig.Builder.zstdDictionary)
     * @param segmentSize    the log's segment size
     * @param maxPayloadSize the log's largest payload: a dictionary's control record must fit in one
     * @param logName        for log lines
     */
    public DictionaryTrainer(boolean enabled, long segmentSize, int maxPayloadSize, String logName) {
        this.dictionarySize = (int) Math.min(MAX_DICTIONARY, segmentSize / 16);
        this.samplesBytes = (int) Math.min(MAX_SAMPLES_BYTES, segmentSize / 2);
        this.maxPayload = (int) Math.min(Math.min(MAX_DICTIONARY_PAYLOAD, segmentSize / 8), maxPayloadSize);
        this.logName = logName;
        this.enabled = enabled && dictionarySize >= MIN_DICTIONARY
                && dictionarySize + ControlRecord.DICTIONARY_HEADER <= maxPayloadSize;
        this.sampling = this.enabled;
    }

    /** The dictionary to compress with, or null while there is none (sampling, training, disabled, failed). */
    public ZstdDictionary active() {
        return active;
    }

    /** The largest payload compressed with the dictionary. */
    public int maxPayload() {
        return maxPayload;
    }

    /**
     * Takes up a dictionary the log already holds (its newest copy, at open or at a promotion) instead of training one.
     * Ignored once a dictionary is active.
     */
    public void adopt(ZstdDictionary dictionary) {
        if (!enabled || dictionary.size() > dictionarySize) {
            return; // a dictionary made for larger segments or payloads: this log trains its own
        }
        synchronized (this) {
            if (active != null || !sampling && samples != null) {
                return; // trained, or training
            }
            sampling = false;
            samples = null;
        }
        active = dictionary;
        LOG.info("Log {}: compressing small zstd payloads with dictionary {}, the newest one the log holds", logName,
                dictionary.id());
    }

    /** Takes a zstd payload as a sample while the budget lasts; at the budget's end, starts training. */
    public void offer(byte[] src, int offset, int length) {
        if (!sampling || length > maxPayload) {
            return;
        }
        synchronized (this) {
            if (!sampling) {
                return;
            }
            if (samples == null) {
                samples = ByteBuffer.allocateDirect(samplesBytes);
                sampleSizes = new int[samplesBytes / 64 + 1]; // payloads below 64 bytes are never compressed
            }
            int n = Math.min(length, samples.remaining());
            samples.put(src, offset, n);
            sampleSizes[sampleCount++] = n;
            if (samples.hasRemaining() && sampleCount < sampleSizes.length) {
                return;
            }
            sampling = false;
        }
        WaldenThreads.daemon(this::train, "walden-dictionary-trainer").start();
    }

    private void train() {
        ByteBuffer dictionary = ByteBuffer.allocateDirect(dictionarySize);
        int[] sizes = java.util.Arrays.copyOf(sampleSizes, sampleCount);
        long t0 = System.nanoTime();
        long result = Zstd.trainFromBufferDirect(samples, sizes, dictionary, false, PayloadCompressor.ZSTD_LEVEL);
        samples = null; // the budget's memory goes with the samples: nothing trains again while the log is open
        if (Zstd.isError(result)) {
            LOG.info("Log {}: no zstd dictionary: training on {} samples failed ({}); zstd payloads are compressed alone",
                    logName, sizes.length, Zstd.getErrorName(result));
            return;
        }
        byte[] bytes = new byte[(int) result];
        dictionary.get(0, bytes);
        ZstdDictionary d = ZstdDictionary.of(bytes);
        if (d == null) {
            LOG.info("Log {}: no zstd dictionary: the trainer made one without an id", logName);
            return;
        }
        active = d;
        LOG.info("Log {}: trained zstd dictionary {} ({} bytes) on {} samples in {} ms", logName, d.id(), bytes.length,
                sizes.length, (System.nanoTime() - t0) / 1_000_000);
    }
}
