package io.walden.core.internal.record;

import com.github.luben.zstd.Zstd;
import io.walden.core.Compression;
import io.walden.core.internal.thread.BackgroundThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

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
 * <p>Thread-safety: {@link #offer} and {@link #active} from any number of appending threads. Sampling tries a lock
 * and gives up rather than wait (only until the budget is full); afterwards {@link #offer} is one volatile read. The
 * dictionary is published once, by compare-and-set from null, after it is built: training and adoption never both
 * win, so the dictionary appenders compress with never changes while the log is open.
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
    /** The level the log compresses zstd payloads at: dictionaries are trained and digested for it. */
    private final int zstdLevel;
    /** Whether this log uses dictionaries: enabled, and its segments and maximum payload are large enough. */
    private final boolean enabled;
    /** Set once, from null, by the training or by {@link #adopt}: whichever comes first is the log's dictionary. */
    private final AtomicReference<ZstdDictionary> active = new AtomicReference<>();
    /** Taken only with tryLock: an appender (maybe an event loop) never waits to give a sample. */
    private final ReentrantLock sampleLock = new ReentrantLock();
    private volatile boolean sampling;
    private volatile boolean closed;
    /** The newest dictionary the log already carries (its end segment), or null; looked up off the append path. */
    private final Supplier<ZstdDictionary> inLog;
    /** Whether the log was searched since open (or since it was promoted): once per lifetime of its content. */
    private final AtomicBoolean lookedInLog = new AtomicBoolean();
    /** Guarded by sampleLock. */
    private ByteBuffer samples;
    private int[] sampleSizes;
    private int sampleCount;
    private final BackgroundThreads threads;

    /**
     * @param enabled        whether the log uses dictionaries at all (WalConfig.Builder.zstdDictionary)
     * @param zstdLevel      the level the log compresses zstd payloads at (WalConfig.Builder.zstdLevel)
     * @param segmentSize    the log's segment size
     * @param maxPayloadSize the log's largest payload: a dictionary's control record must fit in one
     * @param logName        for log lines
     * @param inLog          the newest dictionary the log carries, or null: taken up instead of training one
     * @param threads        where the look in the log and the training run (a thread of the log's own, or its store's)
     */
    public DictionaryTrainer(boolean enabled, int zstdLevel, long segmentSize, int maxPayloadSize, String logName,
                             Supplier<ZstdDictionary> inLog, BackgroundThreads threads) {
        this.inLog = inLog;
        this.threads = threads;
        this.zstdLevel = zstdLevel;
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
        return active.get();
    }

    /** The level the log compresses zstd payloads at, with or without a dictionary. */
    public int zstdLevel() {
        return zstdLevel;
    }

    /** The largest payload compressed with the dictionary. */
    public int maxPayload() {
        return maxPayload;
    }

    /**
     * Takes up a dictionary the log already holds (its newest copy, at open or at a promotion) instead of training one;
     * a training under way is then wasted. Ignored once a dictionary is active, and for one this log could not carry.
     */
    public void adopt(ZstdDictionary dictionary) {
        if (!enabled || closed || dictionary.size() > dictionarySize) {
            return; // a dictionary made for larger segments or payloads: this log trains its own
        }
        try {
            dictionary.forCompression(zstdLevel);
        } catch (RuntimeException e) {
            LOG.warn("Log {}: not compressing with dictionary {} found in the log: zstd refuses it ({})", logName,
                    dictionary.id(), e.toString());
            return;
        }
        if (!active.compareAndSet(null, dictionary)) {
            return;
        }
        sampling = false;
        sampleLock.lock(); // not an appender: may wait for one giving a sample
        try {
            samples = null;
        } finally {
            sampleLock.unlock();
        }
        LOG.info("Log {}: compressing small zstd payloads with dictionary {}, the newest one the log holds", logName,
                dictionary.id());
    }

    /**
     * Takes a zstd payload as a sample while the budget lasts (or not, when another appender is giving one: no appender
     * waits here); at the budget's end, starts training.
     */
    public void offer(byte[] src, int offset, int length) {
        if (!sampling || length > maxPayload) {
            return;
        }
        if (!lookedInLog.get() && lookedInLog.compareAndSet(false, true)) {
            // The first zstd payload since open: a log that carries a dictionary goes on with it. Looked up on a thread
            // of its own (it walks a segment), while this and the next payloads are sampled in case it finds none.
            threads.runOnce(BackgroundThreads.Job.TRAINER, () -> {
                ZstdDictionary d = inLog.get();
                if (d != null) {
                    adopt(d);
                }
            });
        }
        if (!sampleLock.tryLock()) {
            return;
        }
        ByteBuffer full = null;
        int[] sizes = null;
        try {
            if (!sampling) {
                return;
            }
            if (samples == null) {
                samples = ByteBuffer.allocateDirect(samplesBytes);
                sampleSizes = new int[samplesBytes / Compression.MIN_PAYLOAD + 1]; // shorter payloads are never compressed
            }
            int n = Math.min(length, samples.remaining());
            samples.put(src, offset, n);
            sampleSizes[sampleCount++] = n;
            if (samples.hasRemaining() && sampleCount < sampleSizes.length) {
                return;
            }
            sampling = false;
            full = samples;
            sizes = Arrays.copyOf(sampleSizes, sampleCount);
            samples = null; // the budget's memory goes with the training: nothing samples again while the log is open
            sampleSizes = null;
        } finally {
            sampleLock.unlock();
        }
        ByteBuffer trainOn = full;
        int[] trainSizes = sizes;
        threads.runOnce(BackgroundThreads.Job.TRAINER, () -> train(trainOn, trainSizes));
    }

    /**
     * The log's content changed hands (a replica promoted): if it has no dictionary yet, the next zstd payload looks
     * for one in the log again (the primary's) before a training can finish.
     */
    public void lookInLogAgain() {
        lookedInLog.set(false);
    }

    /** The log is closing: a training still under way publishes nothing. */
    public void close() {
        closed = true;
    }

    private void train(ByteBuffer samples, int[] sizes) {
        ByteBuffer dictionary = ByteBuffer.allocateDirect(dictionarySize);
        long t0 = System.nanoTime();
        long result = Zstd.trainFromBufferDirect(samples, sizes, dictionary, false, zstdLevel);
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
        if (!closed && active.compareAndSet(null, d)) {
            LOG.info("Log {}: trained zstd dictionary {} ({} bytes) on {} samples in {} ms", logName, d.id(), bytes.length,
                    sizes.length, (System.nanoTime() - t0) / 1_000_000);
        }
    }
}
