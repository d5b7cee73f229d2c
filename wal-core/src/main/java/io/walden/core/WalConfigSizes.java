package io.walden.core;

import io.walden.core.internal.commit.WalBuffers;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.segment.SegmentHeaderDescriptor;

/**
 * The arithmetic between a log's segment size, its largest payload and its WAL buffers: what a segment or a ring can
 * hold, and the sizes {@link WalConfig} takes when one is left at 0 ("the default"). Pure functions of their
 * arguments; they check nothing, as {@link SegmentSettings#check} has already refused sizes they cannot serve.
 *
 * <p>Thread-safety: stateless; every method from any thread.
 */
final class WalConfigSizes {
    private WalConfigSizes() {
    }

    /** See {@link WalConfig#largestPayloadFor}. */
    static int largestPayloadFor(long segmentSize) {
        // one record (header and time) and the room for one more header the fit rule keeps
        long room = segmentSize - SegmentHeaderDescriptor.LENGTH - RecordDescriptor.TIMED_HEADER_LENGTH
                - RecordDescriptor.HEADER_LENGTH;
        return (int) Math.min(Integer.MAX_VALUE - 64, room & ~7L);
    }

    /** See {@link WalConfig#smallestWalBuffersFor}. */
    static long smallestWalBuffersFor(int maxPayload) {
        long need = RecordDescriptor.aligned(RecordDescriptor.recordLength(maxPayload)) + RecordDescriptor.HEADER_LENGTH;
        return Math.max(WalBuffers.MIN_CAPACITY, Long.highestOneBit(need - 1) << 1);
    }

    /**
     * {@code maxPayloadSize} when set; otherwise 16 MiB, or less when the segments (or WAL buffers chosen explicitly,
     * if not 0) could not hold it.
     */
    static int maxPayloadSize(long segmentSize, int maxPayloadSize, long walBuffers) {
        if (maxPayloadSize > 0) {
            return maxPayloadSize;
        }
        int max = Math.min(WalConfig.DEFAULT_MAX_PAYLOAD, largestPayloadFor(segmentSize));
        if (walBuffers > 0) {
            long ringRoom = (walBuffers - RecordDescriptor.TIMED_HEADER_LENGTH - RecordDescriptor.HEADER_LENGTH) & ~7L;
            max = (int) Math.min(max, ringRoom);
        }
        return max;
    }

    /**
     * {@code walBuffers} when set; otherwise 32 MiB, or the segment size if smaller, but never less than a record of
     * {@code maxPayload} bytes needs.
     */
    static long walBuffers(long segmentSize, int maxPayload, long walBuffers) {
        if (walBuffers > 0) {
            return walBuffers;
        }
        return Math.max(Math.min(WalConfig.DEFAULT_WAL_BUFFERS, segmentSize), smallestWalBuffersFor(maxPayload));
    }
}
