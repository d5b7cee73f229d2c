package io.walden.core.internal.commit;

import io.walden.core.Durability;
import io.walden.core.RemoteCommitTimeoutException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code remote-commit-timeout} as an application sees it: a remote-level commit that its replicas do not confirm fails
 * once the timeout passed since its append began (its local flush included), and within a tenth of the timeout after.
 */
class RemoteCommitTimeoutTest {
    private static final long TIMEOUT_MS = 400;

    @Test
    void asynchronousCommitsFailWithinATenthOfTheTimeoutAfterTheirAppend() throws Exception {
        RemoteWaits waits = new RemoteWaits(TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS));
        waits.activate();
        try {
            List<CompletableFuture<Long>> commits = new ArrayList<>();
            List<Long> failedAt = Collections.synchronizedList(new ArrayList<>());
            for (int i = 0; i < 10; i++) { // spread over the sweeper's period, so that its granularity shows
                long since = System.nanoTime();
                FutureWait wait = new FutureWait(); // an appendAsync's wait, as its record's local flush tells it
                wait.prepare(Durability.ON, waits, since);
                wait.complete(1000 + i);
                CompletableFuture<Long> f = wait.future;
                f.whenComplete((lsn, e) -> failedAt.add(System.nanoTime() - since));
                commits.add(f);
                Thread.sleep(13); // a sleep: the commits' times spread over the sweeper's period
            }
            for (CompletableFuture<Long> f : commits) {
                assertThatThrownBy(f::join).hasCauseInstanceOf(RemoteCommitTimeoutException.class);
            }
            waitUntil(() -> failedAt.size() == 10); // each told its time after its future failed
            assertThat(failedAt).hasSize(10).allSatisfy(nanos -> assertThat(TimeUnit.NANOSECONDS.toMillis(nanos))
                    .isBetween(TIMEOUT_MS, TIMEOUT_MS + TIMEOUT_MS / 10));
        } finally {
            waits.fail("the test is over");
        }
    }

    @Test
    void aBlockedCommitCountsItsTimeoutFromItsAppendNotFromItsLocalFlush() {
        RemoteWaits waits = new RemoteWaits(TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS));
        waits.activate();
        try {
            long appended = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(300); // its flush took 300 ms
            long waitStarted = System.nanoTime();
            assertThatThrownBy(() -> waits.await(Durability.ON, 1000, appended)).isInstanceOf(RemoteCommitTimeoutException.class)
                    .hasMessageContaining("within 400 ms of its append");
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - waitStarted);
            assertThat(waited).as("the 100 ms left of the timeout").isBetween(90L, 100L + TIMEOUT_MS / 10);
        } finally {
            waits.fail("the test is over");
        }
    }

    @Test
    void anAppendStartsTheClockOnlyWhenATimeoutAndAPolicyApply() {
        RemoteWaits none = new RemoteWaits(0);
        none.activate();
        assertThat(none.clockFor(Durability.ON)).isEqualTo(RemoteWaits.NOW);
        RemoteWaits timed = new RemoteWaits(TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS));
        try {
            assertThat(timed.clockFor(Durability.ON)).as("no policy yet").isEqualTo(RemoteWaits.NOW);
            timed.activate();
            assertThat(timed.clockFor(Durability.LOCAL)).isEqualTo(RemoteWaits.NOW);
            assertThat(timed.clockFor(Durability.ON)).isNotEqualTo(RemoteWaits.NOW);
        } finally {
            timed.fail("the test is over");
        }
    }
}
