package io.walden.core;

import io.walden.core.internal.sync.SyncStrategy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.walden.core.TestLogs.SMALL_SEGMENT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link NonWaitingAppends#flushWhenGathered(ScheduledExecutorService)} on a store's logs (docs/group-commit.md, "One
 * journal force per event-loop batch"): an event loop that appended to many logs flushes each without waiting for the
 * journal, and one force of the journal, run on the loop after those flushes, makes all of them durable. Single-thread
 * executors stand in for the sidecar's event loops: each runs its tasks in order and has timers, as Netty's do.
 */
@Timeout(60)
class StoreLoopFlushTest {
    @TempDir
    Path dir;
    private final List<ScheduledExecutorService> loops = new ArrayList<>();

    @AfterEach
    void stopLoops() {
        loops.forEach(ScheduledExecutorService::shutdownNow);
    }

    /** The background writers (the logs' and the journal's) stay asleep: only the loops flush here. */
    private WalStore open(WalStoreConfig.Builder config) {
        return WalStore.open(config.defaults(TestLogs::writersAsleep).build());
    }

    private static WalStoreConfig.Builder store(Path dir, SyncStrategy journalSync) {
        return WalStoreConfig.builder(dir).journalSettings(b -> {
            TestLogs.writersAsleep(b);
            if (journalSync != null) {
                b.syncStrategy(journalSync);
            }
        });
    }

    private ScheduledExecutorService loop(String name) {
        ScheduledExecutorService loop = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, name));
        loops.add(loop);
        return loop;
    }

    @Test
    void oneBatchOfAppendsToSixteenLogsIsMadeDurableByOneForceOfTheJournal() throws Exception {
        try (WalStore store = open(store(dir, null))) {
            List<Wal> logs = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                logs.add(store.create("log-" + i));
            }
            ScheduledExecutorService loop = loop("loop-1");
            List<Told> told = new ArrayList<>();
            long forces = store.sharedFlushCount();
            loop.submit(() -> { // one batch of reads: an append to each log, then each log's flush task
                for (Wal log : logs) {
                    told.add(append(log));
                }
                for (Wal log : logs) {
                    assertThat(log.nonWaiting().flushWhenGathered(loop)).as("the flush is in flight").isZero();
                }
                assertThat(told).as("none is durable before the journal's force").allSatisfy(t -> assertThat(t.isDone()).isFalse());
            }).get();
            CompletableFuture.allOf(told.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
            for (int i = 0; i < logs.size(); i++) {
                assertThat(logs.get(i).flushedLsn()).isGreaterThan(told.get(i).get());
            }
            assertThat(store.sharedFlushCount() - forces).as("forces of the journal for 16 logs' flushes").isEqualTo(1);
        }
    }

    @Test
    void aFailedForceOfTheJournalFailsEveryLogWhoseFlushWaitedForIt() throws Exception {
        FailingSync journalSync = new FailingSync();
        try (WalStore store = open(store(dir, journalSync))) {
            Wal a = store.create("a");
            Wal b = store.create("b");
            ScheduledExecutorService loop = loop("loop-1");
            journalSync.failing = true;
            List<Told> told = new ArrayList<>();
            loop.submit(() -> {
                told.add(append(a));
                told.add(append(b));
                a.nonWaiting().flushWhenGathered(loop);
                b.nonWaiting().flushWhenGathered(loop);
            }).get();
            for (Told t : told) {
                Eventually.waitUntil("the append's completion was told", t::isDone);
                assertThat(t).isCompletedExceptionally();
            }
            assertThat(a.status().isFailed()).as("a failed").isTrue();
            assertThat(b.status().isFailed()).as("b failed").isTrue();
        }
    }

    /**
     * Two loops append to the same eight logs and flush as the sidecar's loops do (each asks again when told to), so
     * their flushes meet in flight: every append is told, durable, and in its log.
     */
    @Test
    void twoLoopsAppendingToTheSameLogsHaveEveryAppendToldAndKept() throws Exception {
        try (WalStore store = open(store(dir, null))) {
            List<Wal> logs = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                logs.add(store.create("log-" + i));
            }
            ConcurrentLinkedQueue<Told> told = new ConcurrentLinkedQueue<>();
            AtomicInteger failures = new AtomicInteger();
            int batches = 300;
            List<CompletableFuture<?>> done = new ArrayList<>();
            for (String name : List.of("loop-1", "loop-2")) {
                ScheduledExecutorService loop = loop(name);
                for (int batch = 0; batch < batches; batch++) {
                    int first = batch;
                    done.add(CompletableFuture.runAsync(() -> {
                        for (int k = 0; k < 3; k++) { // three of the logs, a different three each batch
                            Wal log = logs.get((first + k * 3) % logs.size());
                            told.add(appendOrHandOver(log));
                            new FlushTask(log, loop, failures).run();
                        }
                    }, loop));
                }
            }
            CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
            CompletableFuture.allOf(told.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
            assertThat(failures).hasValue(0);
            assertThat(told).hasSize(2 * batches * 3);
            long kept = 0;
            for (Wal log : logs) {
                try (WalReader r = log.reader(log.oldestLsn())) {
                    while (r.next() != null) {
                        kept++;
                    }
                }
            }
            assertThat(kept).as("records in the logs").isEqualTo(told.size());
        }
    }

    private static Told append(Wal log) {
        Told told = new Told();
        assertThat(log.nonWaiting().tryAppend(0, ByteBuffer.wrap(new byte[64]), Durability.LOCAL, told.completion)).isTrue();
        return told;
    }

    /**
     * {@link #append}, or, when the record would have to wait (the log is paused or dormant for a moment), a blocking
     * append on another thread, as the sidecar takes such a request off its loop.
     */
    private static Told appendOrHandOver(Wal log) {
        Told told = new Told();
        if (!log.nonWaiting().tryAppend(0, ByteBuffer.wrap(new byte[64]), Durability.LOCAL, told.completion)) {
            CompletableFuture.runAsync(() -> told.complete(log.append(new byte[64], Durability.LOCAL)));
        }
        return told;
    }

    /** A log's flush task on a loop, as the sidecar's LoopFlush: asks again on a timer while the log says so. */
    private record FlushTask(Wal log, ScheduledExecutorService loop, AtomicInteger failures) implements Runnable {
        @Override
        public void run() {
            try {
                long again = log.nonWaiting().flushWhenGathered(loop);
                if (again > 0) {
                    loop.schedule(this, again, TimeUnit.NANOSECONDS);
                }
            } catch (RuntimeException e) {
                failures.incrementAndGet();
            }
        }
    }

    /** An append's completion as a future of its LSN. */
    private static final class Told extends CompletableFuture<Long> {
        private final AppendCompletion completion = new AppendCompletion() {
            @Override
            protected void durable(long lsn) {
                complete(lsn);
            }

            @Override
            protected void failed(Throwable cause) {
                completeExceptionally(cause);
            }
        };
    }
}
