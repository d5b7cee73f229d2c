package io.walden.core.internal.thread;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

import static io.walden.core.Eventually.holdsThroughout;
import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/** Many loops on a few shared threads: every loop gets its turns, never two at once, and a stop is its own. */
@Timeout(30)
class LoopGroupTest {
    private static final long AN_HOUR = TimeUnit.HOURS.toNanos(1);

    @Test
    void aThousandLoopsRunOnTwoThreadsEachGettingItsTurns() throws Exception {
        try (LoopGroup group = new LoopGroup("walden-test-group", 2)) {
            List<AtomicInteger> turns = new ArrayList<>();
            List<LoopRunner> runners = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                AtomicInteger n = new AtomicInteger();
                turns.add(n);
                LoopRunner r = group.runner("loop-" + i, () -> n.incrementAndGet() < 3 ? TimeUnit.MILLISECONDS.toNanos(5) : AN_HOUR);
                runners.add(r);
                r.start();
            }
            waitUntil(() -> turns.stream().allMatch(n -> n.get() >= 3));
            assertThat(turns).allMatch(n -> n.get() == 3);
            for (LoopRunner r : runners) {
                assertThat(r.stop(Duration.ofSeconds(5))).isTrue();
            }
        }
    }

    /**
     * A wake-up unparks one parked thread, not the whole group (LoopGroup#woken): four threads waking 64 idle loops
     * 20,000 times while the group's threads park and unpark must never leave a loop asleep after its last wake-up.
     */
    @Test
    void wakeUpsFromManyThreadsAreNeverLostWhileTheGroupsThreadsParkAndUnpark() throws Exception {
        int loops = 64;
        AtomicLongArray wakes = new AtomicLongArray(loops);
        AtomicLongArray seen = new AtomicLongArray(loops);
        try (LoopGroup group = new LoopGroup("walden-test-group", 4)) {
            List<LoopRunner> runners = new ArrayList<>();
            for (int i = 0; i < loops; i++) {
                int loop = i;
                LoopRunner r = group.runner("loop-" + i, () -> {
                    seen.set(loop, wakes.get(loop)); // every wake-up counted before this turn began is served by it
                    return AN_HOUR;
                });
                runners.add(r);
                r.start();
            }
            List<Thread> wakers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int seed = t;
                Thread w = new Thread(() -> {
                    Random random = new Random(seed);
                    for (int k = 0; k < 5_000; k++) {
                        int loop = random.nextInt(loops);
                        wakes.incrementAndGet(loop);
                        runners.get(loop).wake();
                        if (k % 64 == 0) {
                            LockSupport.parkNanos(20_000); // let the group's threads go idle and park now and then
                        }
                    }
                });
                wakers.add(w);
                w.start();
            }
            for (Thread w : wakers) {
                w.join();
            }
            waitUntil(() -> {
                for (int i = 0; i < loops; i++) {
                    if (seen.get(i) != wakes.get(i)) {
                        return false;
                    }
                }
                return true;
            });
            for (LoopRunner r : runners) {
                assertThat(r.stop(Duration.ofSeconds(5))).isTrue();
            }
        }
    }

    @Test
    void aLoopsTurnsNeverOverlapEvenWhenWokenWhileItWorks() throws Exception {
        AtomicInteger inside = new AtomicInteger();
        AtomicBoolean overlapped = new AtomicBoolean();
        AtomicInteger turns = new AtomicInteger();
        try (LoopGroup group = new LoopGroup("walden-test-group", 4)) {
            LoopRunner r = group.runner("busy", () -> {
                if (inside.incrementAndGet() > 1) {
                    overlapped.set(true);
                }
                Thread.onSpinWait();
                inside.decrementAndGet();
                turns.incrementAndGet();
                return TimeUnit.MICROSECONDS.toNanos(50);
            });
            r.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (turns.get() < 2000 && System.nanoTime() < deadline) {
                r.wake();
            }
            assertThat(r.stop(Duration.ofSeconds(5))).isTrue();
        }
        assertThat(turns.get()).isGreaterThanOrEqualTo(2000);
        assertThat(overlapped).isFalse();
    }

    @Test
    void aWakeUpPutOffEndsAnIdleAtItsDeadlineAndNotBefore() throws Exception {
        try (LoopGroup group = new LoopGroup("walden-test-group", 1)) {
            List<Long> turnsAt = new CopyOnWriteArrayList<>();
            LoopRunner r = group.runner("idle", () -> {
                turnsAt.add(System.nanoTime());
                return AN_HOUR;
            });
            r.start();
            waitUntil(() -> turnsAt.size() == 1);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
            r.wakeBy(deadline);
            waitUntil(() -> turnsAt.size() == 2);
            assertThat(turnsAt.get(1)).as("not before the deadline").isGreaterThanOrEqualTo(deadline);
            r.wakeBy(System.nanoTime() + AN_HOUR * 2); // later than the idle it is in: changes nothing
            holdsThroughout("no turn before the idle ends", 100, () -> turnsAt.size() == 2);
            assertThat(r.stop(Duration.ofSeconds(5))).isTrue();
        }
    }

    @Test
    void aWakeUpPutOffWhileTheLoopWorksBringsItsNextTurnForward() throws Exception {
        try (LoopGroup group = new LoopGroup("walden-test-group", 1)) {
            CountDownLatch inTurn = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            AtomicInteger turns = new AtomicInteger();
            LoopRunner r = group.runner("working", () -> {
                if (turns.incrementAndGet() == 1) {
                    inTurn.countDown();
                    release.await();
                }
                return AN_HOUR;
            });
            r.start();
            inTurn.await();
            r.wakeBy(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20));
            release.countDown();
            waitUntil(() -> turns.get() == 2); // within Eventually's bound, not after the hour the turn asked for
            assertThat(r.stop(Duration.ofSeconds(5))).isTrue();
        }
    }

    @Test
    void aLoopDueNowRunsWhileAnotherLoopsTurnBlocks() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch ranOther = new CountDownLatch(1);
        try (LoopGroup group = new LoopGroup("walden-test-group", 2)) {
            LoopRunner blocked = group.runner("upload", () -> {
                release.await(); // an upload that takes long
                return AN_HOUR;
            });
            LoopRunner other = group.runner("writer", () -> {
                ranOther.countDown();
                return AN_HOUR;
            });
            blocked.start();
            other.start();
            assertThat(ranOther.await(10, TimeUnit.SECONDS)).isTrue();
            release.countDown();
            assertThat(blocked.stop(Duration.ofSeconds(5))).isTrue();
            assertThat(other.stop(Duration.ofSeconds(5))).isTrue();
        }
    }

    @Test
    void anInterruptReachesOnlyTheTurnItWasMeantFor() throws Exception {
        CountDownLatch uploading = new CountDownLatch(1);
        AtomicBoolean uploadInterrupted = new AtomicBoolean();
        AtomicBoolean writerSawInterrupt = new AtomicBoolean();
        AtomicInteger writerTurns = new AtomicInteger();
        try (LoopGroup group = new LoopGroup("walden-test-group", 1)) {
            LoopRunner upload = group.runner("upload", () -> {
                uploading.countDown();
                try {
                    new CountDownLatch(1).await(); // an upload that does not end until interrupted
                } catch (InterruptedException e) {
                    uploadInterrupted.set(true);
                    Thread.currentThread().interrupt(); // left set, as a careless job would
                }
                return AN_HOUR;
            });
            LoopRunner writer = group.runner("writer", () -> {
                if (Thread.currentThread().isInterrupted()) {
                    writerSawInterrupt.set(true);
                }
                writerTurns.incrementAndGet();
                return AN_HOUR;
            });
            upload.start();
            assertThat(uploading.await(10, TimeUnit.SECONDS)).isTrue();
            writer.start();
            upload.interrupt();
            waitUntil(() -> writerTurns.get() > 0);
            assertThat(uploadInterrupted).isTrue();
            assertThat(writerTurns.get()).isEqualTo(1);
            assertThat(writerSawInterrupt).as("the group cleared it between the turns").isFalse();
            upload.stop(Duration.ofSeconds(5));
            writer.stop(Duration.ofSeconds(5));
        }
    }

    @Test
    void aJobWhoseErrorHandlingFailsEndsAndTheGroupGoesOnServingTheOthers() throws Exception {
        AtomicInteger otherTurns = new AtomicInteger();
        try (LoopGroup group = new LoopGroup("walden-test-group", 1)) {
            LoopRunner broken = group.runner("broken", new Loop() {
                @Override
                public long doWork() {
                    throw new IllegalStateException("the job fails");
                }

                @Override
                public long onError(Throwable failure) {
                    throw new IllegalStateException("and so does its handling");
                }
            });
            LoopRunner other = group.runner("other", () -> {
                otherTurns.incrementAndGet();
                return TimeUnit.MILLISECONDS.toNanos(1);
            });
            broken.start();
            other.start();
            waitUntil(() -> !broken.isRunning() && otherTurns.get() >= 10);
            assertThat(broken.isRunning()).isFalse();
            assertThat(otherTurns.get()).as("the group's one thread lives on").isGreaterThanOrEqualTo(10);
            assertThat(other.stop(Duration.ofSeconds(5))).isTrue();
        }
    }

    @Test
    void aTaskRunOnceThatFailsIsNotRetried() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        try (BackgroundThreads threads = BackgroundThreads.shared(1)) {
            threads.runOnce(BackgroundThreads.Job.TRAINER, () -> {
                runs.incrementAndGet();
                throw new IllegalStateException("training failed");
            });
            waitUntil(() -> runs.get() > 0);
            // A retry would come within a second (a Loop's default back-off).
            holdsThroughout("run once", 1500, () -> runs.get() == 1);
        }
    }

    @Test
    void aLoopStoppedWhileQueuedNeverRunsAgainAndTheGroupEndsItsThreads() throws Exception {
        AtomicInteger turns = new AtomicInteger();
        LoopGroup group = new LoopGroup("walden-test-group", 2);
        LoopRunner r = group.runner("once", () -> {
            turns.incrementAndGet();
            return AN_HOUR;
        });
        r.start();
        waitUntil(() -> turns.get() > 0);
        assertThat(r.stop(Duration.ofSeconds(5))).isTrue();
        r.wake();
        group.close(5, TimeUnit.SECONDS);
        assertThat(group.isTerminated()).isTrue();
        assertThat(turns.get()).isEqualTo(1);
    }
}
