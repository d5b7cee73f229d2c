package io.walden.core;

import com.sun.management.ThreadMXBean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The append path allocates nothing per record in steady state: bytes allocated by the appending thread
 * itself (HotSpot's per-thread counter, exact, unlike a sampled profile), after the JIT has warmed up.
 * The wal-bench JMH runs report the same with -prof gc, where harness and background threads blur it.
 */
class AllocationTest {
    @TempDir
    Path dir;

    /** How many times a measure may be taken again before its least is judged. */
    private static final int ROUNDS = 5;

    private static long allocatedByThisThread() {
        return ((ThreadMXBean) ManagementFactory.getThreadMXBean())
                .getThreadAllocatedBytes(Thread.currentThread().getId());
    }

    /**
     * The bytes this thread allocates per operation while {@code batch} runs {@code ops} operations: the least of up to
     * {@link #ROUNDS} rounds, stopping at the first under {@code limit}. An allocation per operation shows in every
     * round; a round over the limit followed by one under it is the JIT not yet done with the hot path (its escape
     * analysis is what removes the allocations there), which happens on a machine loaded by the other test classes
     * (3.3 B per dictionary-compressed append seen once in a full run, 0.01 B alone).
     */
    private static double perOp(int ops, double limit, Runnable batch) {
        double least = Double.MAX_VALUE;
        for (int round = 0; round < ROUNDS && least >= limit; round++) {
            long before = allocatedByThisThread();
            batch.run();
            least = Math.min(least, (allocatedByThisThread() - before) / (double) ops);
        }
        return least;
    }

    @Test
    void shouldAllocateNothingPerRecordOnOffAndBlockingLocalAppends() {
        // A fixed clock: the record clock reads the wall clock itself (an Instant, 24 B) at the first append after
        // 10 ms without one, which a loaded machine's slow forces make happen here now and then (6 B per LOCAL append
        // measured once); that is per idle spell, not per record, and not what this test is about.
        Clock fixed = Clock.fixed(Instant.parse("2026-11-27T00:00:00Z"), ZoneOffset.UTC);
        try (Wal wal = Wal.open(WalConfig.builder(dir).segmentSize(256L << 20).clock(fixed).build())) {
            byte[] payload = new byte[64];
            for (int i = 0; i < 200_000; i++) {
                wal.append(payload, Durability.OFF);
            }
            for (int i = 0; i < 1_000; i++) {
                wal.append(payload, Durability.LOCAL);
            }
            double offPerOp = perOp(100_000, 1.0, () -> {
                for (int i = 0; i < 100_000; i++) {
                    wal.append(payload, Durability.OFF);
                }
            });
            double localPerOp = perOp(1_000, 4.0, () -> {
                for (int i = 0; i < 1_000; i++) {
                    wal.append(payload, Durability.LOCAL);
                }
            });
            System.out.printf("allocated per append: OFF %.3f B, LOCAL %.3f B%n", offPerOp, localPerOp);
            assertThat(offPerOp).as("bytes per OFF append").isLessThan(1.0);
            assertThat(localPerOp).as("bytes per blocking LOCAL append (incl. its force)").isLessThan(4.0);
        }
    }

    /** A payload in native memory (a network buffer's view) goes into the log from where it is: no copy, no allocation. */
    @Test
    void shouldAllocateNothingPerRecordOnAppendsFromADirectBuffer() {
        try (Wal wal = Wal.open(WalConfig.builder(dir).segmentSize(256L << 20).build())) {
            ByteBuffer direct = ByteBuffer.allocateDirect(64);
            for (int i = 0; i < 200_000; i++) {
                wal.append(0, direct, Durability.OFF);
            }
            double perOp = perOp(100_000, 1.0, () -> {
                for (int i = 0; i < 100_000; i++) {
                    wal.append(0, direct, Durability.OFF);
                }
            });
            System.out.printf("allocated per append from a direct buffer: %.3f B%n", perOp);
            assertThat(perOp).as("bytes per OFF append from a direct buffer").isLessThan(1.0);
            assertThat(direct.position()).as("the buffer's position is not moved").isZero();
        }
    }

    @ParameterizedTest
    @EnumSource(value = Compression.class, names = {"LZ4", "ZSTD"})
    void shouldAllocateNothingPerRecordOnCompressedAppends(Compression codec) {
        try (Wal wal = Wal.open(WalConfig.builder(dir).segmentSize(256L << 20).compression(codec).build())) {
            byte[] event = CompressionTest.jsonEvent(1);
            ByteBuffer direct = ByteBuffer.allocateDirect(event.length).put(event).flip();
            for (int i = 0; i < 100_000; i++) {
                wal.append(event, Durability.OFF);
                wal.append(0, direct, Durability.OFF);
            }
            double perOp = perOp(100_000, 1.0, () -> {
                for (int i = 0; i < 50_000; i++) {
                    wal.append(event, Durability.OFF);
                    wal.append(0, direct, Durability.OFF);
                }
            });
            System.out.printf("allocated per %s append: %.3f B%n", codec, perOp);
            assertThat(perOp).as("bytes per compressed OFF append").isLessThan(1.0);
        }
    }

    @Test
    void shouldAllocateNothingPerRecordOnDictionaryCompressedAppends() {
        try (Wal wal = Wal.open(WalConfig.builder(dir).segmentSize(16L << 20).compression(Compression.ZSTD).build())) {
            byte[][] events = new byte[1000][];
            for (int i = 0; i < events.length; i++) {
                events[i] = CompressionTest.jsonEvent(i);
            }
            ZstdDictionaryTest.appendUntilTrained(wal, 0);
            // Warm-up rolls segments too: each roll writes a copy of the dictionary into the next segment.
            for (int i = 0; i < 200_000; i++) {
                wal.append(events[i % events.length], Durability.OFF);
            }
            double perOp = perOp(100_000, 1.0, () -> {
                for (int i = 0; i < 100_000; i++) {
                    wal.append(events[i % events.length], Durability.OFF);
                }
            });
            System.out.printf("allocated per dictionary-compressed append: %.3f B%n", perOp);
            assertThat(perOp).as("bytes per dictionary-compressed OFF append").isLessThan(1.0);
        }
    }

    /** Spins (allocating nothing) until {@code completion} was told {@code count} times: it is reused only once told. */
    private static void awaitTold(Reused completion, long count) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (completion.told < count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the completion was told " + completion.told + " times, not " + count);
            }
            Thread.onSpinWait();
        }
    }

    /** A completion reused from one append to the next, as an event loop keeps one per request in flight. */
    private static final class Reused extends AppendCompletion {
        volatile long told; // by this thread's flush, or the background writer's

        @Override
        protected void durable(long lsn) {
            told++;
        }

        @Override
        protected void failed(Throwable cause) {
            throw new AssertionError(cause);
        }
    }

    @Test
    void shouldAllocateNothingPerRecordOnAnEventLoopsAppendAndItsOwnFlush() {
        try (Wal wal = Wal.open(WalConfig.builder(dir).segmentSize(256L << 20).build())) {
            ByteBuffer payload = ByteBuffer.wrap(new byte[64]);
            Reused completion = new Reused();
            for (int i = 0; i < 2_000; i++) {
                wal.nonWaiting().tryAppend(0, payload, Durability.LOCAL, completion);
                wal.nonWaiting().flushIfIdle();
                awaitTold(completion, i + 1);
            }
            long[] appended = {0};
            double perOp = perOp(4_000, 4.0, () -> {
                for (int i = 0; i < 4_000; i++) {
                    if (!wal.nonWaiting().tryAppend(0, payload, Durability.LOCAL, completion)) {
                        throw new AssertionError("a tryAppend was refused");
                    }
                    appended[0]++;
                    wal.nonWaiting().flushIfIdle(); // leads the flush on this thread: the completion is told here...
                    awaitTold(completion, 2_000 + appended[0]); // ...unless the background writer was flushing: it tells it after
                }
            });
            System.out.printf("allocated per tryAppend + flushIfIdle: %.3f B%n", perOp);
            assertThat(completion.told).isEqualTo(2_000 + appended[0]);
            assertThat(perOp).as("bytes per tryAppend + flushIfIdle (incl. its force)").isLessThan(4.0);
        }
    }
}
