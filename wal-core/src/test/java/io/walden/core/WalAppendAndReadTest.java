package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.walden.core.TestLogs.bytes;
import static io.walden.core.TestLogs.string;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WalAppendAndReadTest {
    @TempDir
    Path dir;

    @Test
    void shouldReadBackWhatWasAppendedInOrder() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            long a = wal.append(bytes("alpha"));
            long b = wal.append(bytes("beta"), Durability.LOCAL);
            long c = wal.append(7, bytes("gamma"), Durability.OFF);
            assertThat(a).isLessThan(b).isLessThan(c);
            wal.flush();
            try (WalReader r = wal.reader(a)) {
                WalRecord ra = r.next();
                assertThat(ra.lsn()).isEqualTo(a);
                assertThat(string(ra.payload())).isEqualTo("alpha");
                assertThat(ra.type()).isZero();
                assertThat(ra.nextLsn()).isEqualTo(b);
                assertThat(string(r.next().payload())).isEqualTo("beta");
                WalRecord rc = r.next();
                assertThat(rc.type()).isEqualTo(7);
                assertThat(string(rc.payload())).isEqualTo("gamma");
                assertThat(r.next()).isNull();
            }
        }
    }

    @Test
    void shouldReturnLsnsThatAreFlushedOnceADurableAppendReturns() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            long lsn = wal.append(bytes("x"), Durability.ON);
            assertThat(wal.flushedLsn()).isGreaterThan(lsn);
            assertThat(wal.writtenLsn()).isGreaterThanOrEqualTo(wal.flushedLsn());
            assertThat(wal.insertLsn()).isGreaterThanOrEqualTo(wal.writtenLsn());
        }
    }

    @Test
    void shouldKeepRecordsAcrossReopen() {
        List<Long> lsns = new ArrayList<>();
        WalConfig config = TestLogs.small(dir).build();
        try (Wal wal = Wal.open(config)) {
            for (int i = 0; i < 3000; i++) {
                lsns.add(wal.append(bytes("record-" + i), Durability.OFF));
            }
        }
        try (Wal wal = Wal.open(config)) {
            assertThat(wal.status().recoveryReport().endLsn()).isEqualTo(wal.insertLsn());
            assertThat(wal.status().recoveryReport().bytesCutOff()).isZero();
            assertThat(wal.status().segmentCount()).isGreaterThan(1);
            try (WalReader r = wal.reader(wal.oldestLsn())) {
                for (int i = 0; i < 3000; i++) {
                    WalRecord rec = r.next();
                    assertThat(rec.lsn()).isEqualTo(lsns.get(i));
                    assertThat(string(rec.payload())).isEqualTo("record-" + i);
                }
                assertThat(r.next()).isNull();
            }
            long next = wal.append(bytes("after reopen"));
            assertThat(next).isGreaterThan(lsns.get(lsns.size() - 1));
        }
    }

    @Test
    void shouldAppendByteBuffersWithoutMovingTheirPosition() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            ByteBuffer src = ByteBuffer.wrap(bytes("..payload.."));
            src.position(2).limit(9);
            long lsn = wal.append(3, src, Durability.LOCAL);
            assertThat(src.position()).isEqualTo(2);
            try (WalReader r = wal.reader(lsn)) {
                WalRecord rec = r.next();
                assertThat(string(rec.payload())).isEqualTo("payload");
                assertThat(rec.type()).isEqualTo(3);
            }
        }
    }

    @Test
    void shouldAppendSlicesOfHeapDirectAndReadOnlyBuffers() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            ByteBuffer heap = ByteBuffer.wrap(bytes("xxheap-slicexx")).position(2).limit(12).slice();
            ByteBuffer direct = ByteBuffer.allocateDirect(20).put(bytes("yydirect-sliceyy")).flip().position(2).limit(14).slice();
            long a = wal.append(0, heap, Durability.LOCAL);
            wal.append(0, direct, Durability.LOCAL);
            wal.append(0, ByteBuffer.wrap(bytes("read-only")).asReadOnlyBuffer(), Durability.LOCAL);
            try (WalReader r = wal.reader(a)) {
                assertThat(string(r.next().payload())).isEqualTo("heap-slice");
                assertThat(string(r.next().payload())).isEqualTo("direct-slice");
                assertThat(string(r.next().payload())).isEqualTo("read-only");
            }
        }
    }

    @Test
    void shouldWriteClaimedRecordsInPlace() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            WalClaim claim = new WalClaim();
            wal.claim(5, 8, claim);
            claim.buffer().putLong(claim.buffer().position(), 0x1122334455667788L);
            long lsn = claim.commit(Durability.LOCAL);
            assertThat(claim.isActive()).isFalse();
            wal.claim(0, 100, claim).abort();
            long after = wal.append(bytes("after abort"), Durability.LOCAL);
            try (WalReader r = wal.reader(lsn)) {
                WalRecord rec = r.next();
                assertThat(rec.type()).isEqualTo(5);
                assertThat(rec.payloadView().getLong(0)).isEqualTo(0x1122334455667788L);
                WalRecord next = r.next();
                assertThat(next.lsn()).as("the aborted claim is skipped").isEqualTo(after);
            }
        }
    }

    @Test
    void shouldCompleteAsyncAppendsOnceFlushed() throws Exception {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            List<CompletableFuture<Long>> futures = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                futures.add(wal.appendAsync(bytes("async-" + i), Durability.LOCAL));
            }
            long last = -1;
            for (CompletableFuture<Long> f : futures) {
                long lsn = f.get(10, TimeUnit.SECONDS);
                assertThat(lsn).isGreaterThan(last);
                assertThat(wal.flushedLsn()).isGreaterThan(lsn);
                last = lsn;
            }
        }
    }

    @Test
    void shouldRefusePayloadsOverTheMaximumBeforeWritingAnything() {
        try (Wal wal = Wal.open(TestLogs.small(dir).maxPayloadSize(1000).build())) {
            long before = wal.insertLsn();
            assertThatThrownBy(() -> wal.append(new byte[1001]))
                    .isInstanceOf(PayloadTooLargeException.class)
                    .hasMessageContaining("1001").hasMessageContaining("1000");
            assertThat(wal.insertLsn()).isEqualTo(before);
            wal.append(new byte[1000]);
        }
    }

    @Test
    void shouldRefuseAppendsAfterCloseAndCloseTwiceQuietly() {
        Wal wal = Wal.open(TestLogs.small(dir).build());
        wal.append(bytes("x"));
        wal.close();
        wal.close();
        assertThatThrownBy(() -> wal.append(bytes("y"))).isInstanceOf(WalClosedException.class);
    }

    @Test
    void shouldRefuseASecondOpenOfTheSameDirectory() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            assertThatThrownBy(() -> Wal.open(TestLogs.small(dir).build()))
                    .isInstanceOf(WalLockedException.class)
                    .hasMessageContaining("already open");
        }
    }

    @Test
    void shouldWaitInPollForTheNextRecord() throws Exception {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            try (WalReader r = wal.reader(wal.insertLsn())) {
                assertThat(r.poll(50, TimeUnit.MILLISECONDS)).isNull();
                Thread reader = Thread.currentThread();
                Thread t = new Thread(() -> {
                    try {
                        Eventually.waitUntil(() -> reader.getState() == Thread.State.TIMED_WAITING); // polling
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                    wal.append(bytes("late"));
                });
                t.start();
                WalRecord rec = r.poll(5, TimeUnit.SECONDS);
                assertThat(rec).isNotNull();
                assertThat(string(rec.payload())).isEqualTo("late");
                t.join();
            }
        }
    }
}
