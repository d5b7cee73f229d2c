package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The WAL buffers are a ring of fixed size (PostgreSQL's wal_buffers): records that run past its end stay whole,
 * a full ring is written out by the appender that needs room (never forced for it), and the memory never grows.
 */
@Timeout(120)
class WalBuffersTest {
    private static final long RING = 64 << 10;

    @TempDir
    Path dir;

    /** A writer that would only write after 10 s: nothing empties the ring but the appenders themselves. */
    private WalConfig.Builder idleWriter(long segmentSize) {
        return WalConfig.builder(dir).segmentSize(segmentSize).walBuffers(RING).writerDelay(Duration.ofSeconds(10))
                .offWriteDelay(Duration.ofSeconds(10));
    }

    @Test
    void shouldWriteTheRingOutItselfWhenAnAppenderNeedsRoomWithoutForcing() {
        try (Wal wal = Wal.open(idleWriter(1 << 20).build())) {
            long start = wal.insertLsn();
            long forcesBefore = wal.status().flushCount();
            List<Long> lsns = new ArrayList<>();
            for (int i = 0; i < 4000; i++) { // about 2 MB: thirty laps of the ring
                lsns.add(wal.append(0, payload(i, 1000), Durability.OFF));
                assertThat(wal.insertLsn() - wal.writtenLsn()).as("unwritten bytes never exceed the ring").isLessThanOrEqualTo(RING);
            }
            assertThat(wal.writtenLsn()).as("the appenders wrote the ring out").isGreaterThan(start + (1 << 20));
            assertThat(wal.status().flushCount()).as("room in the ring costs a write, never a force").isEqualTo(forcesBefore);
            wal.flush();
            assertReadsBack(wal, start, lsns, 1000);
        }
    }

    @Test
    void shouldKeepRecordsThatRunPastTheEndOfTheRingWholeAcrossReopen() {
        // Segments four times the ring: laps end inside segments, and records of up to 16 KiB run into the slack.
        WalConfig config = WalConfig.builder(dir).segmentSize(256 << 10).walBuffers(RING).maxPayloadSize(16 << 10).build();
        List<Long> lsns = new ArrayList<>();
        long start;
        try (Wal wal = Wal.open(config)) {
            start = wal.insertLsn();
            for (int i = 0; i < 3000; i++) {
                lsns.add(wal.append(0, payload(i, 16 << 10), i % 50 == 0 ? Durability.LOCAL : Durability.OFF));
            }
            wal.flush();
            assertReadsBack(wal, start, lsns, 16 << 10);
        }
        try (Wal wal = Wal.open(config)) {
            assertThat(wal.status().recoveryReport().repaired()).as("recovery found every record valid").isFalse();
            assertReadsBack(wal, start, lsns, 16 << 10);
        }
    }

    @Test
    void shouldGiveClaimsOneZeroedWindowEvenWhenTheyRunPastTheEndOfTheRing() {
        try (Wal wal = Wal.open(idleWriter(256 << 10).maxPayloadSize(16 << 10).build())) {
            long start = wal.insertLsn();
            WalClaim claim = new WalClaim();
            List<Long> lsns = new ArrayList<>();
            for (int i = 0; i < 400; i++) { // about 50 laps
                int length = payload(i, 16 << 10).length;
                wal.claim(0, length, claim);
                ByteBuffer b = claim.buffer();
                assertThat(b.remaining()).isEqualTo(length);
                for (int k = b.position(); k < b.limit(); k++) {
                    if (b.get(k) != 0) {
                        throw new AssertionError("claim " + i + " starts with a non-zero byte at " + (k - b.position()));
                    }
                }
                b.put(payload(i, 16 << 10));
                lsns.add(claim.commit(Durability.OFF));
            }
            wal.flush();
            assertReadsBack(wal, start, lsns, 16 << 10);
        }
    }

    @Test
    void shouldRefuseWalBuffersThatCannotHoldTheLargestRecord() {
        assertThatThrownBy(() -> WalConfig.builder(dir).walBuffers(64 << 10).maxPayloadSize(1 << 20).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cannot hold a record of " + (1 << 20));
        assertThat(WalConfig.builder(dir).walBuffers(64 << 10).build().maxPayloadSize())
                .as("small WAL buffers chosen explicitly bound the default largest payload").isEqualTo((64 << 10) - 56);
        assertThatThrownBy(() -> WalConfig.builder(dir).walBuffers(100_000).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("power of two");
        assertThat(WalConfig.builder(dir).build().walBuffers()).isEqualTo(WalConfig.DEFAULT_WAL_BUFFERS);
        assertThat(WalConfig.builder(dir).segmentSize(1 << 20).build().walBuffers()).as("at most a segment by default")
                .isEqualTo(1 << 20);
    }

    private static byte[] payload(int i, int maxLength) {
        SplittableRandom r = new SplittableRandom(i);
        byte[] b = new byte[r.nextInt(maxLength + 1)];
        r.nextBytes(b);
        return b;
    }

    private static void assertReadsBack(Wal wal, long start, List<Long> lsns, int maxLength) {
        try (WalReader r = wal.reader(start)) {
            int i = 0;
            for (WalRecord rec; (rec = r.next()) != null; i++) {
                assertThat(rec.lsn()).isEqualTo(lsns.get(i));
                assertThat(rec.payload()).isEqualTo(payload(i, maxLength));
            }
            assertThat(i).isEqualTo(lsns.size());
        }
    }
}
