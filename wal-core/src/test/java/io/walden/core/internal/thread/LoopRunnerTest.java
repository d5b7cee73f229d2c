package io.walden.core.internal.thread;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/** How a background job's thread runs it: its idle, its wake-ups, its errors and its end. */
@Timeout(30)
class LoopRunnerTest {
    private static final long AN_HOUR = TimeUnit.HOURS.toNanos(1);

    @Test
    void shouldEndAnIdleAtOnceWhenWoken() throws Exception {
        AtomicInteger turns = new AtomicInteger();
        LoopRunner runner = new LoopRunner("walden-test-loop", () -> {
            turns.incrementAndGet();
            return AN_HOUR;
        });
        runner.start();
        awaitTurns(turns, 1);
        runner.wake();
        awaitTurns(turns, 2);
        assertThat(runner.stop(Duration.ofSeconds(5))).isTrue();
    }

    @Test
    void shouldKeepAWakeUpThatCameWhileTheJobWasWorking() throws Exception {
        CountDownLatch working = new CountDownLatch(1);
        AtomicBoolean woken = new AtomicBoolean();
        AtomicInteger turns = new AtomicInteger();
        LoopRunner runner = new LoopRunner("walden-test-loop", () -> {
            if (turns.incrementAndGet() == 1) {
                working.countDown();
                while (!woken.get()) { // the wake-up comes now, before the idle begins (a spin: a park here
                    Thread.onSpinWait(); // would take the wake-up itself, see LoopRunner)
                }
            }
            return AN_HOUR;
        });
        runner.start();
        working.await();
        runner.wake();
        woken.set(true);
        awaitTurns(turns, 2);
        runner.stop(Duration.ofSeconds(5));
    }

    @Test
    void shouldRetryAfterTheBackOffTheJobAsksForWhenItThrows() throws Exception {
        AtomicInteger turns = new AtomicInteger();
        AtomicReference<Throwable> seen = new AtomicReference<>();
        LoopRunner runner = new LoopRunner("walden-test-loop", new Loop() {
            @Override
            public long doWork() throws Exception {
                if (turns.incrementAndGet() == 1) {
                    throw new IOException("disk full");
                }
                return AN_HOUR;
            }

            @Override
            public long onError(Throwable failure) {
                seen.set(failure);
                return TimeUnit.MILLISECONDS.toNanos(10);
            }
        });
        runner.start();
        awaitTurns(turns, 2);
        assertThat(seen.get()).hasMessage("disk full");
        assertThat(runner.isRunning()).isTrue();
        runner.stop(Duration.ofSeconds(5));
    }

    @Test
    void shouldEndTheLoopWhenTheJobSaysStopOnAnError() throws Exception {
        LoopRunner runner = new LoopRunner("walden-test-loop", () -> {
            throw new OutOfMemoryError("test");
        });
        runner.start();
        waitUntil(() -> !runner.isRunning());
        assertThat(runner.isRunning()).as("an Error ends the loop by default").isFalse();
        assertThat(runner.stop(Duration.ofSeconds(5))).isTrue();
    }

    @Test
    void shouldStopAnIdlingLoopWithoutWaitingOutItsIdle() {
        LoopRunner runner = new LoopRunner("walden-test-loop", () -> AN_HOUR);
        runner.start();
        long start = System.nanoTime();
        assertThat(runner.stop(Duration.ofSeconds(10))).isTrue();
        assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start)).isLessThan(10);
    }

    @Test
    void shouldReturnAtOnceWhenStoppedFromItsOwnThreadAndEndAfterTheTurn() throws Exception {
        AtomicReference<LoopRunner> self = new AtomicReference<>();
        AtomicReference<Boolean> stoppedInside = new AtomicReference<>();
        CountDownLatch turned = new CountDownLatch(1);
        LoopRunner runner = new LoopRunner("walden-test-loop", () -> {
            stoppedInside.set(self.get().stop(Duration.ofSeconds(30))); // a close from a callback of its own work
            turned.countDown();
            return 0;
        });
        self.set(runner);
        runner.start();
        turned.await();
        assertThat(stoppedInside.get()).as("no join on itself").isFalse();
        assertThat(runner.stop(Duration.ofSeconds(5))).isTrue();
    }

    private static void awaitTurns(AtomicInteger turns, int n) throws Exception {
        waitUntil("turn " + n, () -> turns.get() >= n);
    }
}
