package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;
import static io.walden.core.internal.PartsForTests.preparer;
import static io.walden.core.internal.PartsForTests.registry;

/** An event loop's append never waits for the next segment or for room in the WAL buffers: it is told to append elsewhere instead. */
@Timeout(60)
class NonWaitingAppendTest {
    @TempDir
    Path dir;

    @Test
    void shouldAppendNothingAndReturnAtOnceWhileTheNextSegmentIsNotPreparedThenAppendOnceItIs() throws Exception {
        try (Wal wal = Wal.open(TestLogs.small(dir).walBuffers(1 << 20).build())) { // a ring that never fills here
            long segment = TestLogs.SMALL_SEGMENT;
            while (wal.insertLsn() < segment / 2) {
                assertThat(wal.nonWaiting().tryAppendAsync(0, ByteBuffer.wrap(new byte[1000]), Durability.OFF)).isNotNull();
            }
            waitUntil(() -> registry(wal.parts()).get(segment) != null); // prepared once the first segment is half written
            CompletableFuture<Long> last;
            synchronized (preparer(wal.parts())) { // the preparer cannot get past its next step: nothing more is prepared
                while ((last = wal.nonWaiting().tryAppendAsync(0, ByteBuffer.wrap(new byte[1000]), Durability.OFF)) != null) {
                    assertThat(last.get()).isLessThan(2 * segment);
                }
                long insert = wal.insertLsn();
                long t0 = System.nanoTime();
                assertThat(wal.nonWaiting().tryAppendAsync(0, ByteBuffer.wrap(new byte[1000]), Durability.LOCAL)).isNull();
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).as("returned without waiting").isLessThan(1000);
                assertThat(wal.insertLsn()).as("nothing was reserved").isEqualTo(insert);
                assertThat(insert).isBetween(2 * segment - 1100, 2 * segment);
            }
            waitUntil(() -> registry(wal.parts()).get(2 * segment) != null);
            CompletableFuture<Long> appended = wal.nonWaiting().tryAppendAsync(0, ByteBuffer.wrap(new byte[1000]), Durability.LOCAL);
            assertThat(appended).isNotNull();
            assertThat(appended.get(10, TimeUnit.SECONDS)).isGreaterThan(2 * segment);
        }
    }

    @Test
    void shouldAppendNothingAndReturnAtOnceWhileTheWalBuffersAreFull() throws Exception {
        // The background writer sleeps for 10 s: nothing empties the ring but an appender that may wait.
        // Segments larger than the ring: the ring fills long before a segment does.
        WalConfig config = WalConfig.builder(dir).segmentSize(1 << 20).walBuffers(64 << 10).writerDelay(Duration.ofSeconds(10))
                .offWriteDelay(Duration.ofSeconds(10)).build();
        try (Wal wal = Wal.open(config)) {
            for (int attempt = 1; ; attempt++) {
                while (wal.nonWaiting().tryAppendAsync(0, ByteBuffer.wrap(new byte[1000]), Durability.OFF) != null) {
                    assertThat(wal.insertLsn() - wal.writtenLsn()).as("never more than the ring holds unwritten")
                            .isLessThanOrEqualTo(64 << 10);
                }
                long insert = wal.insertLsn();
                long written = wal.writtenLsn();
                assertThat(insert - written).isGreaterThan((64 << 10) - 2 * 1024);
                CompletableFuture<Long> refused = wal.nonWaiting().tryAppendAsync(0, ByteBuffer.wrap(new byte[1000]), Durability.LOCAL);
                if (wal.writtenLsn() > written) {
                    // The background writer's idle check raced with the first appends (it looks for unwritten records
                    // twice before it parks, and writes them when the second look finds some): it made room, or wrote
                    // while the append was refused, between the reads on a loaded machine, so who wrote cannot be
                    // told. Fill the ring again; a non-waiting append that wrote would do it at every attempt.
                    assertThat(attempt).as("the writer keeps emptying a ring it should leave alone").isLessThan(5);
                    continue;
                }
                assertThat(refused).isNull();
                assertThat(wal.insertLsn()).as("nothing was reserved").isEqualTo(insert);
                assertThat(wal.writtenLsn()).as("nothing was written by a non-waiting append").isEqualTo(written);
                break;
            }
        }
    }
}
