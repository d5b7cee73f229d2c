package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.walden.core.TestLogs.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static io.walden.core.internal.PartsForTests.registry;

@Timeout(60)
class FailedForceTest {
    @TempDir
    Path dir;

    @Test
    void shouldFailEveryPendingAndLaterDurableAppendOnceAForceFails() throws Exception {
        FailingSync sync = new FailingSync();
        Wal wal = Wal.open(TestLogs.small(dir).syncStrategy(sync).writerDelay(Duration.ofHours(1)).build());
        long before = wal.append(bytes("before"), Durability.LOCAL);
        sync.failing = true;
        CompletableFuture<Long> async = wal.appendAsync(bytes("async"), Durability.ON);

        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<Long>> blocking = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            int n = i;
            blocking.add(pool.submit(() -> wal.append(bytes("during " + n), Durability.LOCAL)));
        }
        for (Future<Long> f : blocking) {
            assertThatThrownBy(() -> f.get(30, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(WalFailedException.class)
                    .hasMessageContaining("Input/output error");
        }
        assertThatThrownBy(() -> async.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(WalFailedException.class);
        assertThat(wal.status().isFailed()).isTrue();
        assertThat(wal.flushedLsn()).isGreaterThan(before);

        sync.failing = false; // the disk "recovers": the log must still not pretend the lost force happened
        assertThatThrownBy(() -> wal.append(bytes("later"), Durability.LOCAL))
                .isInstanceOf(WalFailedException.class).hasMessageContaining("reopened");
        assertThatThrownBy(() -> wal.append(bytes("later off"), Durability.OFF)).isInstanceOf(WalFailedException.class);
        pool.shutdownNow();
        wal.close();

        try (Wal reopened = Wal.open(TestLogs.small(dir).build())) {
            try (WalReader r = reopened.reader(before)) {
                assertThat(TestLogs.string(r.next().payload())).isEqualTo("before");
            }
            reopened.append(bytes("after reopen"), Durability.LOCAL);
        }
    }

    @Test
    void shouldFailOffRecordsPendingTheBackgroundWriterWithoutHanging() {
        FailingSync sync = new FailingSync();
        try (Wal wal = Wal.open(TestLogs.small(dir).syncStrategy(sync).writerDelay(Duration.ofMillis(10)).build())) {
            sync.failing = true;
            wal.append(bytes("off"), Durability.OFF);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!wal.status().isFailed() && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(wal.status().isFailed()).as("the background writer's failed force put the log in the failed state").isTrue();
        }
    }

    @Test
    void shouldFailTheLogLoudlyWhenAForceOnTheBackgroundWriterThrowsAnErrorNeverHangingReady() throws Exception {
        FailingSync sync = new FailingSync();
        try (Wal wal = Wal.open(TestLogs.small(dir).syncStrategy(sync).writerDelay(Duration.ofMillis(10)).build())) {
            sync.error = new InternalError("a fault occurred in an unsafe memory access operation (injected)");
            wal.append(bytes("off"), Durability.OFF);
            CompletableFuture<Long> async = wal.appendAsync(bytes("async"), Durability.LOCAL);
            assertThatThrownBy(() -> async.get(10, TimeUnit.SECONDS)).as("the future fails, it does not hang")
                    .hasCauseInstanceOf(WalFailedException.class).hasMessageContaining("unsafe memory access");
            assertThat(wal.status().isFailed()).isTrue();
            sync.error = null;
            assertThatThrownBy(() -> wal.append(bytes("later"), Durability.LOCAL)).isInstanceOf(WalFailedException.class);
        }
    }

    @Test
    void shouldFailTheLogWhenTheFlushLeadersForceThrowsAnError() {
        FailingSync sync = new FailingSync();
        try (Wal wal = Wal.open(TestLogs.small(dir).syncStrategy(sync).writerDelay(Duration.ofHours(1)).build())) {
            sync.error = new InternalError("injected");
            assertThatThrownBy(() -> wal.append(bytes("x"), Durability.LOCAL)).isInstanceOf(WalFailedException.class);
            assertThat(wal.status().isFailed()).isTrue();
        }
    }

    @Test
    void shouldFailTheLogWhenAWriteOfTheWalBuffersFailsAndKeepWhatWasWrittenIntact() throws Exception {
        // A ring larger than what is appended and an idle background writer: the flush below writes it all at once,
        // into the first segment (which works) and the second (whose channel is closed under it, as a dead disk would).
        WalConfig config = TestLogs.small(dir).walBuffers(1 << 20).writerDelay(Duration.ofHours(1))
                .offWriteDelay(Duration.ofHours(1)).build();
        long second = TestLogs.SMALL_SEGMENT;
        List<Long> lsns = new ArrayList<>();
        try (Wal wal = Wal.open(config)) {
            long before = wal.flushedLsn();
            for (int i = 0; wal.insertLsn() < second + 10_000; i++) {
                lsns.add(wal.append(bytes("record " + i), Durability.OFF));
            }
            registry(wal.parts()).get(second).channel().close();
            assertThatThrownBy(wal::flush).isInstanceOf(WalFailedException.class);
            assertThat(wal.status().isFailed()).isTrue();
            assertThat(wal.flushedLsn()).as("a failed write never becomes durable").isEqualTo(before);
            assertThatThrownBy(wal::flush).isInstanceOf(WalFailedException.class);
            assertThat(wal.flushedLsn()).as("nor does anything after it").isEqualTo(before);
            assertThatThrownBy(() -> wal.append(bytes("later"), Durability.OFF)).isInstanceOf(WalFailedException.class);
        }
        try (Wal wal = Wal.open(config)) {
            // What the writes put in the files is whole: every record there reads back, in order.
            try (WalReader r = wal.reader(0)) {
                int i = 0;
                for (WalRecord rec; (rec = r.next()) != null; i++) {
                    assertThat(rec.lsn()).isEqualTo(lsns.get(i));
                    assertThat(TestLogs.string(rec.payload())).isEqualTo("record " + i);
                }
                // (The background writer, nudged by the first append, may have written part of the second segment before
                // its channel was closed: a prefix of it may be there too, each record whole.)
                assertThat((long) i).as("every record of the first segment").isGreaterThanOrEqualTo(lsns.stream().filter(l -> l < second).count());
            }
        }
    }
}
