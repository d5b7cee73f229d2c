package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static io.walden.core.TestLogs.SMALL_SEGMENT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static io.walden.core.internal.PartsForTests.idleRing;

/**
 * A store's logs take their WAL buffers from one budget ({@link WalStoreConfig.Builder#walBuffers}): a log holds its
 * ring only while it appends, and the logs appending at once never hold more than the budget, whatever their number.
 */
@Timeout(120) // a log that never gets its ring back shows as an append that never returns: a failure, not a hung build
class StoreWalBuffersTest {
    /** A log's ring with 64 KiB segments: 64 KiB (at least a segment's largest record, and no slack). */
    private static final long RING = SMALL_SEGMENT;

    @TempDir
    Path dir;

    private WalStore open(long budget) {
        return WalStore.open(WalStoreConfig.builder(dir).walBuffers(budget).defaults(b -> b.segmentSize(SMALL_SEGMENT))
                .build());
    }

    /**
     * Creates log "busy" and opens a claim in it, which this thread holds until it commits: a log with a claim in
     * progress is busy, and its ring (the whole budget of one ring) cannot go back.
     */
    private static WalClaim busyHoldingTheBudget(WalStore store) {
        return store.create("busy").claim(0, 16, new WalClaim());
    }

    private static List<Long> lsns(Wal log) {
        List<Long> out = new ArrayList<>();
        try (WalReader r = log.reader(log.oldestLsn())) {
            for (WalRecord rec; (rec = r.next()) != null; ) {
                out.add(rec.lsn());
            }
        }
        return out;
    }

    @Test
    void aLogHoldsNoneOfTheBudgetUntilItAppendsAndItsRingThen() {
        try (WalStore store = open(4 * RING)) {
            Wal a = store.create("a");
            store.create("b");
            assertThat(store.walBuffersHeld()).as("two logs created, none appended").isZero();
            a.append(TestLogs.bytes("first"), Durability.LOCAL);
            assertThat(store.walBuffersHeld()).as("one log appended").isEqualTo(RING);
        }
        try (WalStore store = open(4 * RING)) {
            assertThat(store.walBuffersHeld()).as("the store opened again").isZero();
        }
    }

    @Test
    void anIdleLogGivesItsRingBackAndTakesItAgainAtItsNextAppend() {
        try (WalStore store = open(4 * RING)) {
            Wal a = store.create("a");
            long first = a.append(TestLogs.bytes("before"), Durability.LOCAL);
            assertThat(idleRing(a.parts()).trim()).as("the ring went back").isTrue();
            assertThat(store.walBuffersHeld()).isZero();
            long second = a.append(TestLogs.bytes("after"), Durability.LOCAL);
            assertThat(store.walBuffersHeld()).isEqualTo(RING);
            assertThat(lsns(a)).containsExactly(first, second);
        }
    }

    @Test
    void aLogIdleForItsIdlePeriodGivesItsRingBackByItselfNotBefore() throws Exception {
        Duration idle = Duration.ofMillis(500); // the default (5 s) is WalConfigTest's
        try (WalStore store = WalStore.open(WalStoreConfig.builder(dir).walBuffers(4 * RING)
                .defaults(b -> b.segmentSize(SMALL_SEGMENT).checkpointInterval(Duration.ofMillis(50))
                        .idleAfter(idle)).build())) {
            Wal a = store.create("a");
            long appending = System.nanoTime();
            a.append(TestLogs.bytes("then idle"), Durability.LOCAL);
            assertThat(store.walBuffersHeld()).isEqualTo(RING);
            Eventually.waitUntil("the idle log's ring given back", () -> store.walBuffersHeld() == 0);
            assertThat(System.nanoTime() - appending).as("nanoseconds from the append to the ring given back")
                    .isGreaterThanOrEqualTo(idle.toNanos());
        }
    }

    @Test
    void logsAppendingAtOnceBeyondTheBudgetTakeTurnsAndLoseNothing() throws Exception {
        int logs = 12;
        long budget = 3 * RING;
        try (WalStore store = open(budget)) {
            List<Wal> all = new ArrayList<>();
            for (int i = 0; i < logs; i++) {
                all.add(store.create("log-" + i));
            }
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong mostHeld = new AtomicLong();
            Thread sampler = new Thread(() -> {
                while (!stop.get()) {
                    mostHeld.accumulateAndGet(store.walBuffersHeld(), Math::max);
                    Thread.onSpinWait();
                }
            });
            sampler.start();
            ConcurrentLinkedQueue<long[]> acknowledged = new ConcurrentLinkedQueue<>(); // {log, lsn, seq}
            List<CompletableFuture<Void>> appenders = new ArrayList<>();
            for (int t = 0; t < 6; t++) {
                long seed = t;
                appenders.add(CompletableFuture.runAsync(() -> {
                    SplittableRandom random = new SplittableRandom(seed);
                    for (int n = 0; n < 100; n++) {
                        int log = random.nextInt(logs);
                        long seq = (seed << 32) | n;
                        Durability level = n % 3 == 0 ? Durability.LOCAL : Durability.OFF;
                        long lsn = all.get(log).append(ByteBuffer.allocate(8).putLong(0, seq).array(), level);
                        acknowledged.add(new long[] {log, lsn, seq});
                    }
                }));
            }
            CompletableFuture.allOf(appenders.toArray(new CompletableFuture[0])).get(90, TimeUnit.SECONDS);
            stop.set(true);
            sampler.join();
            assertThat(mostHeld.get()).as("the most the logs held at once").isLessThanOrEqualTo(budget);
            assertThat(store.walBuffersGivenBack()).as("rings given back so that other logs could append").isPositive();
            all.forEach(Wal::flush); // the OFF records too, for the readers of flushed records
            for (long[] a : acknowledged) {
                Wal log = all.get((int) a[0]);
                try (WalReader r = log.reader(a[1])) {
                    WalRecord rec = r.next();
                    assertThat(rec).as("record %s of log-%d", Lsn.format(a[1]), a[0]).isNotNull();
                    assertThat(rec.lsn()).isEqualTo(a[1]);
                    assertThat(rec.payloadView().order(java.nio.ByteOrder.BIG_ENDIAN).getLong(0)).isEqualTo(a[2]);
                }
            }
        }
    }

    @Test
    void anAppendWaitsForTheBudgetWhileEveryOtherLogIsBusyAndGoesOnOnceOneFallsQuiet() throws Exception {
        try (WalStore store = open(RING)) {
            WalClaim claim = busyHoldingTheBudget(store);
            Wal waiting = store.create("waiting");
            CompletableFuture<Long> append = CompletableFuture.supplyAsync(
                    () -> waiting.append(TestLogs.bytes("waits"), Durability.LOCAL));
            // Whether it waits can only be seen as a while without an answer: a second is far more than an append takes.
            assertThat(append).as("an append while the budget is held by a busy log")
                    .failsWithin(1, TimeUnit.SECONDS).withThrowableOfType(java.util.concurrent.TimeoutException.class);
            claim.commit(Durability.LOCAL);
            long lsn = append.get(30, TimeUnit.SECONDS);
            assertThat(lsns(waiting)).containsExactly(lsn);
            assertThat(store.walBuffersHeld()).isEqualTo(RING);
        }
    }

    @Test
    void aThreadInsideTheLogHoldingTheBudgetAppendsToAnotherRatherThanWaitForItself() throws Exception {
        try (WalStore store = open(RING)) {
            WalClaim claim = busyHoldingTheBudget(store); // this thread is inside busy, which holds the whole budget
            Wal other = store.create("other");
            long lsn = other.append(TestLogs.bytes("not a deadlock"), Durability.LOCAL); // takes its ring beyond it
            claim.commit(Durability.LOCAL);
            assertThat(lsns(other)).containsExactly(lsn);
            assertThat(store.walBuffersOverdrafts()).isEqualTo(1);
        }
    }

    @Test
    void anAppendThatMustNotWaitIsRefusedWhileItsLogCannotTakeItsRingAtOnce() throws Exception {
        try (WalStore store = open(RING)) {
            WalClaim claim = busyHoldingTheBudget(store);
            Wal dormant = store.create("dormant");
            boolean appended = CompletableFuture.supplyAsync(() -> dormant.nonWaiting().tryAppend(0,
                    ByteBuffer.wrap(TestLogs.bytes("later")), Durability.OFF, new AppendCompletion() {
                        @Override
                        protected void durable(long lsn) {
                        }

                        @Override
                        protected void failed(Throwable cause) {
                        }
                    }))
                    .get(10, TimeUnit.SECONDS);
            assertThat(appended).as("a non-waiting append to a log that would wait for the budget").isFalse();
            claim.commit(Durability.LOCAL);
            assertThat(idleRing(store.log("busy").orElseThrow().parts()).trim()).isTrue(); // the budget free again
            assertThat(CompletableFuture.supplyAsync(() -> dormant.nonWaiting().tryAppendAsync(0,
                    ByteBuffer.wrap(TestLogs.bytes("now")), Durability.OFF)).get(10, TimeUnit.SECONDS))
                    .as("once the ring fits").isNotNull();
        }
    }

    @Test
    void aLogWhoseRingAloneExceedsTheBudgetIsRefusedAndLeavesNothing() {
        try (WalStore store = open(RING)) {
            assertThatThrownBy(() -> store.create("big", b -> b.walBuffers(2 * RING)))
                    .isInstanceOf(IllegalSettingException.class).hasMessageContaining("walBuffers");
            assertThat(store.names()).isEmpty();
            assertThat(Files.exists(dir.resolve("logs").resolve("big"))).isFalse();
        }
    }

    @Test
    void aLogClosedWhileItsAppendWaitsForTheBudgetRefusesItAndHoldsNothing() throws Exception {
        try (WalStore store = open(RING)) {
            WalClaim claim = busyHoldingTheBudget(store);
            Wal closing = store.create("closing");
            CompletableFuture<Long> append = CompletableFuture.supplyAsync(
                    () -> closing.append(TestLogs.bytes("never"), Durability.LOCAL));
            Eventually.waitUntil("the append waiting for the budget", () -> store.walBuffersWaits() > 0);
            store.delete("closing");
            assertThat(append).failsWithin(30, TimeUnit.SECONDS).withThrowableOfType(java.util.concurrent.ExecutionException.class)
                    .withCauseInstanceOf(WalClosedException.class);
            claim.commit(Durability.LOCAL);
            assertThat(store.walBuffersHeld()).as("held by the busy log only").isEqualTo(RING);
        }
    }
}
