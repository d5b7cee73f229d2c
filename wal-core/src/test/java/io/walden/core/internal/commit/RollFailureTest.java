package io.walden.core.internal.commit;

import io.walden.core.internal.thread.BackgroundThreads;
import io.walden.core.internal.thread.CachedWallClock;
import io.walden.core.Durability;
import io.walden.core.WalConfig;
import io.walden.core.internal.metrics.WalStats;
import io.walden.core.internal.record.DictionaryTrainer;
import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.segment.Segment;
import io.walden.core.internal.segment.SegmentFiles;
import io.walden.core.internal.segment.SegmentLinks;
import io.walden.core.internal.segment.SegmentPreparer;
import io.walden.core.internal.segment.SegmentRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A roll that fails half-way (an Error in its bookkeeping) still publishes every record it reserved. */
class RollFailureTest {
    private static final long SEGMENT = 64 << 10;

    @TempDir
    Path dir;

    /** The table of each segment's first prev link, made to throw once, as an OutOfMemoryError would. */
    private static final class FailingOnce extends SegmentLinks {
        volatile boolean armed;

        FailingOnce() {
            super(Map.of());
        }

        @Override
        public void begins(long segmentStart, long prevLsn) {
            if (armed) {
                armed = false;
                throw new OutOfMemoryError("injected during a roll");
            }
            super.begins(segmentStart, prevLsn);
        }
    }

    @Test
    void shouldPublishTheClosingRecordAndTheReservationWhenARollThrows() throws Exception {
        SegmentRegistry registry = new SegmentRegistry(SEGMENT);
        // A ring larger than what the test appends: no appender ever needs room (there is no writer here).
        WalBuffers ring = WalBuffers.allocate(1 << 20, SEGMENT, SEGMENT);
        for (long start = 0; start < 3 * SEGMENT; start += SEGMENT) {
            registry.add(Segment.map(SegmentFiles.prepare(dir, SEGMENT, start, 42, null), start, SEGMENT));
        }
        SegmentPreparer preparer = new SegmentPreparer(dir, SEGMENT, 42, registry, 0, List.of(), () -> () -> true, e -> { },
                BackgroundThreads.own());
        FailingOnce firstPrev = new FailingOnce();
        Position insert = new Position(64);
        Position published = new Position(64);
        Appender appender = new Appender(registry, preparer, ring, insert, published, new Position(64), new ReadNotifier(), firstPrev, 0,
                new WalStats(), new DictionaryTrainer(false, WalConfig.DEFAULT_ZSTD_LEVEL, SEGMENT, 1 << 10, "test", () -> null,
                        BackgroundThreads.own()),
                new RecordClock(new CachedWallClock(java.time.Clock.systemUTC())));
        while (insert.get() + 2 * 1024 < SEGMENT) {
            appender.append(0, new byte[1000], 0, 1000, Durability.OFF);
        }
        firstPrev.armed = true;
        assertThatThrownBy(() -> {
            for (int i = 0; i < 10; i++) {
                appender.append(0, new byte[1000], 0, 1000, Durability.OFF);
            }
        }).isInstanceOf(OutOfMemoryError.class);
        assertThat(insert.get()).as("the failed roll moved into the next segment").isGreaterThan(SEGMENT);
        assertThat(appender.advancePublished()).as("nothing reserved is left unpublished").isEqualTo(insert.get());
        long after = appender.append(0, new byte[10], 0, 10, Durability.OFF);
        assertThat(appender.advancePublished()).isEqualTo(after + RecordDescriptor.aligned(RecordDescriptor.recordLength(10)));
        ring.free();
        for (Segment s : registry.snapshot()) {
            s.markRemoved();
        }
    }
}
