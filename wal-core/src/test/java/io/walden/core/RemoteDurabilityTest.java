package io.walden.core;

import io.walden.core.replication.SyncConfirmations;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static io.walden.core.Eventually.waitUntil;
import static io.walden.core.TestLogs.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The seam replication drives: remote-level commits wait, after their local flush, for the synchronous
 * policy's confirmation at their own level (PostgreSQL's write, flush and apply queues). The test plays the
 * replication side by reporting confirmed positions, as wal-replication will.
 */
@Timeout(60)
class RemoteDurabilityTest {
    @TempDir
    Path dir;

    @Test
    void shouldTreatRemoteLevelsAsLocalWhenNoPolicyIsSet() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            for (Durability level : new Durability[] {Durability.REMOTE_WRITE, Durability.ON, Durability.REMOTE_APPLY}) {
                long lsn = wal.append(bytes("x"), level);
                assertThat(wal.flushedLsn()).isGreaterThan(lsn);
            }
        }
    }

    @Test
    void shouldReleaseEachLevelOnlyWhenItsOwnPositionPassesTheRecord() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            SyncConfirmations remote = wal.replication().remoteWaits();
            remote.activate();
            Future<Long> write = pool.submit(() -> wal.append(bytes("w"), Durability.REMOTE_WRITE));
            Future<Long> on = pool.submit(() -> wal.append(bytes("o"), Durability.ON));
            Future<Long> apply = pool.submit(() -> wal.append(bytes("a"), Durability.REMOTE_APPLY));
            waitUntil(() -> wal.flushedLsn() >= wal.insertLsn() && wal.insertLsn() > 64 + 3 * 24);
            assertStillWaiting(write, on, apply);

            long end = wal.insertLsn();
            remote.advance(Durability.REMOTE_WRITE, end);
            assertThat(write.get(10, TimeUnit.SECONDS)).isLessThan(end);
            assertStillWaiting(on, apply);

            remote.advance(Durability.ON, end);
            assertThat(on.get(10, TimeUnit.SECONDS)).isLessThan(end);
            assertStillWaiting(apply);

            remote.advance(Durability.REMOTE_APPLY, end);
            assertThat(apply.get(10, TimeUnit.SECONDS)).isLessThan(end);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldCompleteAsyncRemoteCommitsInLsnOrderPerLevel() throws Exception {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            wal.replication().remoteWaits().activate();
            List<Long> completed = Collections.synchronizedList(new ArrayList<>());
            List<CompletableFuture<Void>> done = new ArrayList<>();
            List<Long> lsns = new ArrayList<>();
            for (int i = 0; i < 2000; i++) {
                CompletableFuture<Long> f = wal.appendAsync(bytes("r" + i), Durability.ON);
                done.add(f.thenAccept(completed::add));
            }
            wal.flush();
            assertStillWaiting(done.get(0)); // the first in LSN order: none is told before it
            assertThat(completed).as("nothing is confirmed remotely yet").isEmpty();
            long mid = wal.insertLsn();
            for (int i = 0; i < 2000; i++) {
                lsns.add(wal.append(bytes("late" + i), Durability.OFF));
            }
            wal.replication().remoteWaits().advance(Durability.ON, mid);
            CompletableFuture.allOf(done.toArray(new CompletableFuture[0])).get(10, TimeUnit.SECONDS);
            assertThat(completed).hasSize(2000).isSorted().allSatisfy(l -> assertThat(l).isLessThan(mid));
            assertThat(lsns).isNotEmpty();
        }
    }

    @Test
    void shouldFailARemoteCommitAfterTheTimeoutWhileItStaysDurableLocally() throws Exception {
        try (Wal wal = Wal.open(TestLogs.small(dir).remoteCommitTimeout(Duration.ofMillis(200)).build())) {
            wal.replication().remoteWaits().activate();
            assertThatThrownBy(() -> wal.append(bytes("lonely"), Durability.ON))
                    .isInstanceOf(RemoteCommitTimeoutException.class)
                    .hasMessageContaining("durable locally")
                    .hasMessageContaining("on");
            CompletableFuture<Long> async = wal.appendAsync(bytes("lonely too"), Durability.REMOTE_APPLY);
            assertThatThrownBy(() -> async.get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(RemoteCommitTimeoutException.class);
            try (WalReader r = wal.reader(wal.oldestLsn())) {
                assertThat(TestLogs.string(r.next().payload())).isEqualTo("lonely");
                assertThat(TestLogs.string(r.next().payload())).isEqualTo("lonely too");
            }
        }
    }

    @Test
    void shouldReleaseEveryWaiterWhenThePolicyIsCleared() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            wal.replication().remoteWaits().activate();
            List<Future<Long>> blocked = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                blocked.add(pool.submit(() -> wal.append(bytes("b"), Durability.ON)));
            }
            CompletableFuture<Long> async = wal.appendAsync(bytes("a"), Durability.REMOTE_WRITE);
            assertStillWaiting(blocked.toArray(new Future[0]));
            assertThat(async).isNotDone();
            wal.replication().remoteWaits().deactivate();
            for (Future<Long> f : blocked) {
                f.get(10, TimeUnit.SECONDS);
            }
            async.get(10, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldFailWaitingRemoteCommitsPromptlyWhenTheLogCloses() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        Wal wal = Wal.open(TestLogs.small(dir).build());
        wal.replication().remoteWaits().activate();
        Future<Long> blocked = pool.submit(() -> wal.append(bytes("b"), Durability.REMOTE_APPLY));
        CompletableFuture<Long> async = wal.appendAsync(bytes("a"), Durability.ON);
        assertStillWaiting(blocked);
        long t0 = System.nanoTime();
        wal.close();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).as("close() does not wait for the replicas").isLessThan(5000);
        assertThatThrownBy(() -> blocked.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(RemoteCommitUnconfirmedException.class)
                .hasMessageContaining("durable locally").hasMessageContaining("closing");
        assertThatThrownBy(() -> async.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(RemoteCommitUnconfirmedException.class);
        pool.shutdownNow();
        try (Wal reopened = Wal.open(TestLogs.small(dir).build())) {
            assertThat(reopened.status().recoveryReport().endLsn()).as("both records were durable locally").isGreaterThan(64 + 2 * 24);
        }
    }

    @Test
    void shouldFailWaitingRemoteCommitsWhenTheSourceDetachesNeverReleasingThemAsLocal() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            SyncConfirmations remote = wal.replication().remoteWaits();
            remote.activate();
            Future<Long> blocked = pool.submit(() -> wal.append(bytes("b"), Durability.ON));
            CompletableFuture<Long> async = wal.appendAsync(bytes("a"), Durability.REMOTE_WRITE);
            assertStillWaiting(blocked);
            remote.detach("replication stopped for the test");
            assertThatThrownBy(() -> blocked.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(RemoteCommitUnconfirmedException.class)
                    .hasMessageContaining("durable locally").hasMessageContaining("replication stopped for the test");
            assertThatThrownBy(() -> async.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(RemoteCommitUnconfirmedException.class);
            RemoteCommitUnconfirmedException later = Assertions.assertThrows(
                    RemoteCommitUnconfirmedException.class, () -> wal.append(bytes("later"), Durability.REMOTE_APPLY),
                    "while the policy stands and no source confirms, later remote commits fail too");
            assertThat(wal.flushedLsn()).as("the record is durable locally").isGreaterThan(later.lsn());
            assertThat(remote.unavailableReason()).contains("for the test");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldWaitForConfirmationsAgainOnceASourceReattaches() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(1);
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            SyncConfirmations remote = wal.replication().remoteWaits();
            remote.activate();
            remote.detach("gone");
            remote.activate();
            assertThat(remote.unavailableReason()).isNull();
            Future<Long> blocked = pool.submit(() -> wal.append(bytes("b"), Durability.ON));
            assertStillWaiting(blocked);
            remote.advance(Durability.ON, wal.insertLsn());
            assertThat(blocked.get(10, TimeUnit.SECONDS)).isLessThan(wal.insertLsn());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldRefuseACloseFromAThreadInsideTheLog() {
        Wal wal = Wal.open(TestLogs.small(dir).build());
        WalClaim claim = wal.claim(0, 8, new WalClaim()); // a claim holds its thread's place in the log
        assertThatThrownBy(wal::close).isInstanceOf(IllegalStateException.class).hasMessageContaining("another thread");
        assertThat(wal.isClosed()).isFalse();
        claim.commit(Durability.LOCAL);
        wal.close();
        assertThat(wal.isClosed()).isTrue();
    }

    private static void assertStillWaiting(Future<?>... futures) {
        for (Future<?> f : futures) {
            assertThatThrownBy(() -> f.get(150, TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class);
        }
    }
}
