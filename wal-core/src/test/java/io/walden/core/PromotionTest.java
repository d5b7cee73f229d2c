package io.walden.core;

import io.walden.core.internal.recovery.HistoryFile;
import io.walden.core.internal.recovery.LogInspector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Epochs (PostgreSQL's timelines): a promotion begins a new epoch at the log's end, durably, and a log can follow
 * another only if its own epoch and end lie inside the other's history.
 */
class PromotionTest {
    @TempDir
    Path work;

    /** A replica that received everything {@code primary} wrote, then was cut off from it. */
    private Wal replicaOf(Wal primary, Path dir) {
        Wal replica = Replicas.open(primary, dir);
        Replicas.catchUp(primary, replica);
        return replica;
    }

    @Test
    void aNewLogIsInEpochOneFromTheStart() {
        try (Wal wal = Wal.open(TestLogs.small(work.resolve("log")).build())) {
            assertThat(wal.status().epoch()).isEqualTo(1);
            assertThat(wal.status().history().epochs()).containsExactly(new Epoch(1, 0));
        }
    }

    @Test
    void aPromotionNumberedPastEpochsTheLogNeverLivedSkipsToThatNumberDurably() {
        Path dir = work.resolve("log");
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            wal.append("x".getBytes(), Durability.LOCAL);
            wal.replication().refuseAppends("a replica");
            Epoch epoch = wal.replication().promote(5);
            assertThat(epoch.number()).isEqualTo(5);
            assertThat(wal.replication().promote(2).number()).as("never below the next number").isEqualTo(6);
        }
        try (Wal reopened = Wal.open(TestLogs.small(dir).build())) {
            assertThat(reopened.status().history().epochs()).extracting(Epoch::number).containsExactly(1, 5, 6);
        }
    }

    @Test
    void drainingRefusedAppendsWaitsForThoseInFlightSoThatNothingLandsPastTheReturnedEnd() throws Exception {
        try (Wal wal = Wal.open(TestLogs.small(work.resolve("log")).build())) {
            AtomicLong lastAccepted = new AtomicLong(-1);
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> writers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                Thread w = new Thread(() -> {
                    while (!stop.get()) {
                        try {
                            long lsn = wal.append(new byte[100], Durability.OFF);
                            lastAccepted.accumulateAndGet(lsn, Math::max);
                        } catch (AppendsRefusedException e) {
                            return;
                        }
                    }
                });
                w.start();
                writers.add(w);
            }
            Eventually.waitUntil(() -> lastAccepted.get() >= 0); // appends under way when the refusal comes
            wal.replication().refuseAppends("switching over");
            long end = wal.replication().drainAppends(5, TimeUnit.SECONDS);
            stop.set(true);
            for (Thread w : writers) {
                w.join();
            }
            assertThat(end).isPositive().isEqualTo(wal.insertLsn());
            assertThat(lastAccepted.get()).isLessThan(end);
            assertThatThrownBy(() -> wal.append("late".getBytes(), Durability.OFF)).isInstanceOf(AppendsRefusedException.class);
        }
    }

    @Test
    void pausedAppendsAreRefusedButReadersStillSeeEverythingTheLogHolds() throws Exception {
        try (Wal wal = Wal.open(TestLogs.small(work.resolve("log")).build())) {
            long lsn = wal.append("before".getBytes(), Durability.LOCAL);
            wal.replication().pauseAppends("switching over");
            assertThatThrownBy(() -> wal.append("during".getBytes(), Durability.OFF)).isInstanceOf(AppendsRefusedException.class)
                    .hasMessageContaining("switching over");
            assertThat(wal.readLimit()).as("not limited as a replica's").isEqualTo(Long.MAX_VALUE);
            assertThat(wal.replication().drainAppends(1, TimeUnit.SECONDS)).isEqualTo(wal.insertLsn());
            try (WalReader r = wal.reader(lsn)) {
                assertThat(new String(r.next().payload())).isEqualTo("before");
            }
            wal.replication().promote(0);
            wal.append("after".getBytes(), Durability.LOCAL);
        }
    }

    @Test
    void drainingAppendsThatAreNotRefusedIsAMistake() {
        try (Wal wal = Wal.open(TestLogs.small(work.resolve("log")).build())) {
            assertThatThrownBy(() -> wal.replication().drainAppends(1, TimeUnit.SECONDS))
                    .isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void promotionBeginsTheNextEpochAtTheEndAcceptsAppendsAndChainsThemToTheReplicatedRecords() throws Exception {
        Path replicaDir = work.resolve("replica");
        long end;
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build())) {
            for (int i = 0; i < 2000; i++) {
                primary.append(("old " + i).getBytes(), Durability.OFF);
            }
            primary.flush();
            try (Wal replica = replicaOf(primary, replicaDir)) {
                end = replica.insertLsn();
                assertThat(end).isEqualTo(primary.insertLsn());
                Epoch epoch = replica.replication().promote();
                assertThat(epoch).isEqualTo(new Epoch(2, end));
                assertThat(replica.status().epoch()).isEqualTo(2);
                long lsn = replica.append("new 0".getBytes(), Durability.LOCAL);
                assertThat(lsn).isEqualTo(end);
            }
        }
        try (Wal reopened = Wal.open(TestLogs.small(replicaDir).build())) {
            assertThat(reopened.status().history().epochs()).containsExactly(new Epoch(1, 0), new Epoch(2, end));
            try (WalReader r = reopened.reader(reopened.oldestLsn())) {
                for (int i = 0; i < 2000; i++) {
                    assertThat(new String(r.next().payload())).isEqualTo("old " + i);
                }
                assertThat(new String(r.next().payload())).isEqualTo("new 0");
            }
        }
        assertThat(new LogInspector(replicaDir).inspect(new LogInspector.Visitor() { }).clean()).isTrue();
    }

    @Test
    void anOldPrimaryThatWentOnAfterTheReplicasEndHasDivergedFromThePromotedHistory() {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build())) {
            primary.append("both have this".getBytes(), Durability.LOCAL);
            try (Wal replica = replicaOf(primary, work.resolve("replica"))) {
                primary.append("only the old primary has this".getBytes(), Durability.LOCAL);
                replica.replication().promote();
                String why = replica.status().history().divergence(primary.status().history().at(primary.insertLsn()), primary.insertLsn());
                assertThat(why).contains("holds records this log never had");
                assertThatThrownBy(() -> primary.replication().adoptHistory(replica.status().history()))
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("cannot follow");
                assertThat(primary.status().epoch()).isEqualTo(1);
            }
        }
    }

    @Test
    void anOldPrimaryThatStoppedAtTheReplicasEndCanFollowThePromotedLogAndTakesItsHistory() throws Exception {
        Path primaryDir = work.resolve("primary");
        try (Wal primary = Wal.open(TestLogs.small(primaryDir).build())) {
            primary.append("both have this".getBytes(), Durability.LOCAL);
            try (Wal replica = replicaOf(primary, work.resolve("replica"))) {
                replica.replication().promote();
                primary.replication().adoptHistory(replica.status().history());
                assertThat(primary.status().epoch()).isEqualTo(2);
            }
        }
        assertThat(HistoryFile.read(primaryDir).epochs()).containsExactly(new Epoch(1, 0), new Epoch(2, 0x40 + 48));
    }

    @Test
    void aLogThatKnowsOfANewerEpochRefusesToFollowAStalePrimaryEvenBeforeReachingThatEpoch() throws Exception {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal replica = Wal.open(TestLogs.small(work.resolve("replica")).logId(primary.status().logId()).build())) {
            replica.replication().adoptHistory(EpochHistory.of(List.of(new Epoch(1, 0), new Epoch(2, 0x9000)))); // learnt, not reached
            assertThatThrownBy(() -> replica.replication().adoptHistory(primary.status().history()))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("stale");
            assertThat(replica.status().epoch()).isEqualTo(2);
        }
    }

    @Test
    void rivalPromotionsWithTheSameNumberButAnotherStartAreToldApart() {
        EpochHistory a = EpochHistory.of(List.of(new Epoch(1, 0), new Epoch(2, 0x1000)));
        assertThat(a.divergence(new Epoch(2, 0x2000), 0x2000)).contains("rival promotion");
        assertThat(a.divergence(new Epoch(2, 0x1000), 0x5000)).isNull();
        assertThat(a.divergence(new Epoch(1, 0), 0x1000)).isNull();
        assertThat(a.divergence(new Epoch(3, 0x1000), 0x1000)).contains("not in this log's history");
    }

    @Test
    void promotingBehindAnAdoptedEpochDropsTheEpochItNeverReachedAndNumbersPastIt() {
        EpochHistory adopted = EpochHistory.of(List.of(new Epoch(1, 0), new Epoch(2, 0x9000)));
        EpochHistory next = adopted.next(0x5000);
        assertThat(next.epochs()).containsExactly(new Epoch(1, 0), new Epoch(3, 0x5000));
    }

    @Test
    void aPromotionMarksItsEpochAsBegunHereAndAnAdoptedHistoryIsNotMarked() throws Exception {
        Path primaryDir = work.resolve("primary");
        Path replicaDir = work.resolve("replica");
        try (Wal primary = Wal.open(TestLogs.small(primaryDir).build())) {
            primary.append("both have this".getBytes(), Durability.LOCAL);
            try (Wal replica = replicaOf(primary, replicaDir)) {
                replica.replication().promote();
                assertThat(HistoryFile.readStored(replicaDir).begunHere()).isTrue();
                primary.replication().refuseAppends("follows the promoted replica now");
                primary.replication().adoptHistory(replica.status().history());
            }
        }
        assertThat(HistoryFile.readStored(primaryDir))
                .isEqualTo(new HistoryFile.Stored(EpochHistory.of(List.of(new Epoch(1, 0), new Epoch(2, 0x40 + 48))), false));
        assertThat(Files.readString(replicaDir.resolve(HistoryFile.NAME))).contains("2 0/70 begun-here\n");
    }

    @Test
    void aHistoryFileMarkingAnEpochOtherThanTheLastAsBegunHereFailsTheOpen() throws Exception {
        Path dir = work.resolve("log");
        Wal.open(TestLogs.small(dir).build()).close();
        Files.writeString(dir.resolve(HistoryFile.NAME), "1 0/0 begun-here\n2 0/40\n");
        assertThatThrownBy(() -> Wal.open(TestLogs.small(dir).build()))
                .isInstanceOf(WalCorruptedException.class).hasMessageContaining("line 2").hasMessageContaining("begun-here");
    }

    @Test
    void aHistoryFileThatIsNotAHistoryFailsTheOpenAndNamesTheLine() throws Exception {
        Path dir = work.resolve("log");
        Wal.open(TestLogs.small(dir).build()).close();
        Files.writeString(dir.resolve(HistoryFile.NAME), "1 0/0\n2 banana\n");
        assertThatThrownBy(() -> Wal.open(TestLogs.small(dir).build()))
                .isInstanceOf(WalCorruptedException.class).hasMessageContaining("line 2");
        Files.writeString(dir.resolve(HistoryFile.NAME), "2 0/0\n1 0/40\n");
        assertThatThrownBy(() -> Wal.open(TestLogs.small(dir).build()))
                .isInstanceOf(WalCorruptedException.class).hasMessageContaining("numbers must increase");
    }
}
