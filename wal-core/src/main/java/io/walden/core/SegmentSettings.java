package io.walden.core;

import io.walden.core.internal.commit.WalBuffers;

/**
 * A log's segments and the records they take: the segment size, the largest payload a record may carry, the WAL buffers
 * records pass through on their way into the segments, and the truncated segments kept for reuse. The three sizes are
 * one concept because each bounds another: a record of the largest payload must fit in a segment beside its header and
 * the closing record, and in the WAL buffers beside the next record's header ({@link WalConfigSizes} does that
 * arithmetic, {@link #check} refuses what it cannot serve). Each value is explained where it is set, on
 * {@link WalConfig.Builder}'s method of the same name.
 *
 * <p>From {@link WalConfig#segmentSettings()} every size is resolved. In a builder, {@code maxPayloadSize} and
 * {@code walBuffers} are 0 until set, meaning "the default", which depends on the other sizes and is resolved when the
 * config is built ({@link #resolved}).
 *
 * <p>Thread-safety: immutable.
 *
 * @param segmentSize    bytes per segment file, a power of two from 64 KiB to 1 GiB ({@link WalConfig.Builder#segmentSize})
 * @param maxPayloadSize the largest payload accepted ({@link WalConfig.Builder#maxPayloadSize})
 * @param walBuffers     bytes of WAL buffers ({@link WalConfig.Builder#walBuffers})
 * @param spareSegments  truncated segments kept for reuse ({@link WalConfig.Builder#spareSegments})
 */
public record SegmentSettings(long segmentSize, int maxPayloadSize, long walBuffers, int spareSegments) {
    /** A builder's values before any is set: 64 MiB segments, the two dependent sizes at "the default", 2 spares. */
    static final SegmentSettings DEFAULTS = new SegmentSettings(WalConfig.DEFAULT_SEGMENT_SIZE, 0, 0, 2);

    SegmentSettings withSegmentSize(long bytes) {
        return new SegmentSettings(bytes, maxPayloadSize, walBuffers, spareSegments);
    }

    SegmentSettings withMaxPayloadSize(int bytes) {
        return new SegmentSettings(segmentSize, bytes, walBuffers, spareSegments);
    }

    SegmentSettings withWalBuffers(long bytes) {
        return new SegmentSettings(segmentSize, maxPayloadSize, bytes, spareSegments);
    }

    SegmentSettings withSpareSegments(int count) {
        return new SegmentSettings(segmentSize, maxPayloadSize, walBuffers, count);
    }

    /**
     * Refuses sizes the log cannot serve, as set (0 for a default), in this order: the segment size, the payload it
     * must hold, the WAL buffers' own range, the WAL buffers that must hold that payload, the spares.
     */
    void check() {
        if (segmentSize < WalConfig.MIN_SEGMENT_SIZE || segmentSize > WalConfig.MAX_SEGMENT_SIZE
                || Long.bitCount(segmentSize) != 1) {
            throw new IllegalSettingException("segmentSize", "must be a power of two from 64 KiB to 1 GiB", segmentSize);
        }
        int largest = WalConfigSizes.largestPayloadFor(segmentSize);
        if (maxPayloadSize < 0 || maxPayloadSize > largest) {
            throw new IllegalSettingException("maxPayloadSize", "must be from 1 to " + largest
                    + " bytes for segments of " + segmentSize + " bytes (segmentSize)", maxPayloadSize);
        }
        int payload = WalConfigSizes.maxPayloadSize(segmentSize, maxPayloadSize, walBuffers);
        if (walBuffers != 0 && (walBuffers < WalBuffers.MIN_CAPACITY || walBuffers > WalBuffers.MAX_CAPACITY
                || Long.bitCount(walBuffers) != 1)) {
            throw new IllegalSettingException("walBuffers", "must be a power of two from 64 KiB to 1 GiB", walBuffers);
        }
        long smallest = WalConfigSizes.smallestWalBuffersFor(payload);
        if (walBuffers != 0 && walBuffers < smallest) {
            throw new IllegalSettingException("walBuffers", "cannot hold a record of " + payload + " bytes (maxPayloadSize): "
                    + "use at least " + smallest + " bytes or a smaller maxPayloadSize", walBuffers);
        }
        WalConfigValidation.requireNonNegative(spareSegments, "spareSegments");
    }

    /**
     * These sizes with the defaults resolved, once {@link #check} passed. The payload first: its default is bounded by
     * WAL buffers set explicitly, and the default WAL buffers must hold it.
     */
    SegmentSettings resolved() {
        int payload = WalConfigSizes.maxPayloadSize(segmentSize, maxPayloadSize, walBuffers);
        return new SegmentSettings(segmentSize, payload, WalConfigSizes.walBuffers(segmentSize, payload, walBuffers),
                spareSegments);
    }
}
