package io.walden.core;

import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.walden.core.internal.recovery.CursorFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Named consumer cursors ({@link Cursors}): durable control records in the log, forward only, holding back truncation
 * up to a cap, replicated, and rebuilt at open from the cursor files and the log.
 */
class CursorsTest {
    @TempDir
    Path work;

    private static long[] fill(Wal wal, int n) {
        long[] lsns = new long[n];
        for (int i = 0; i < n; i++) {
            lsns[i] = wal.append(TestLogs.bytes("record " + i + " " + "x".repeat(100)), Durability.OFF);
        }
        wal.flush();
        return lsns;
    }

    private static List<String> read(WalReader r) {
        List<String> out = new ArrayList<>();
        for (WalRecord rec; (rec = r.next()) != null; ) {
            out.add(TestLogs.string(rec.payload()).split(" ")[1]);
        }
        return out;
    }

    @Test
    void aCursorIsCreatedCommittedForwardListedReadFromAndDeleted() {
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            long[] lsns = fill(wal, 10);
            Cursors cursors = wal.cursors();
            cursors.create("orders-projection", lsns[0]);
            cursors.commit("orders-projection", lsns[7]);
            cursors.create("audit.v2", wal.insertLsn());
            assertThat(cursors.position("orders-projection")).isEqualTo(lsns[7]);
            assertThat(cursors.list()).extracting(Cursors.Cursor::name).containsExactly("audit.v2", "orders-projection");
            assertThat(cursors.list().get(1).lagBytes()).isEqualTo(wal.insertLsn() - lsns[7]);
            try (WalReader r = cursors.reader("orders-projection")) {
                assertThat(read(r)).containsExactly("7", "8", "9");
            }
            assertThat(cursors.delete("audit.v2")).isTrue();
            assertThat(cursors.delete("audit.v2")).isFalse();
            assertThatThrownBy(() -> cursors.position("audit.v2")).isInstanceOf(UnknownCursorException.class);
        }
    }

    @Test
    void readersNeverSeeTheLogsOwnControlRecords() {
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            long start = wal.insertLsn();
            fill(wal, 3);
            wal.cursors().create("c", start);
            wal.cursors().commit("c", wal.insertLsn());
            fill(wal, 2);
            try (WalReader r = wal.reader(start, WalReader.Visibility.WRITTEN)) {
                assertThat(read(r)).containsExactly("0", "1", "2", "0", "1");
            }
        }
    }

    @Test
    void aCommitBelowTheCursorIsRefusedAndLeavesItWhereItWas() {
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            long[] lsns = fill(wal, 5);
            wal.cursors().create("c", lsns[3]);
            assertThatThrownBy(() -> wal.cursors().commit("c", lsns[1])).isInstanceOf(CursorBackwardsException.class)
                    .hasMessageContaining("only forward");
            assertThat(wal.cursors().position("c")).isEqualTo(lsns[3]);
        }
    }

    @Test
    void badNamesUnknownCursorsAndBadLsnsAreRefusedClearly() {
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            long[] lsns = fill(wal, 5);
            Cursors cursors = wal.cursors();
            for (String bad : new String[] {"", "a/b", "x".repeat(65), "white space", "é"}) {
                assertThatThrownBy(() -> cursors.create(bad, lsns[0])).as("'%s'", bad)
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1 to 64");
            }
            assertThatThrownBy(() -> cursors.commit("nobody", lsns[0])).isInstanceOf(UnknownCursorException.class);
            assertThatThrownBy(() -> cursors.create("c", wal.insertLsn() + 8)).isInstanceOf(IllegalLsnException.class)
                    .hasMessageContaining("beyond the end");
            assertThatThrownBy(() -> cursors.create("c", lsns[2] + 8)).isInstanceOf(IllegalLsnException.class);
            cursors.create("c", lsns[1]);
            assertThatThrownBy(() -> cursors.create("c", lsns[2])).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("already exists");
            assertThat(cursors.list()).hasSize(1);
        }
    }

    @Test
    void cursorsAreKnownAfterACleanCloseAndAfterReopeningWithoutTheCheckpointFile() throws Exception {
        long[] lsns;
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            lsns = fill(wal, 400); // several segments
            wal.cursors().create("a", lsns[10]);
            wal.cursors().create("b", lsns[20]);
            wal.cursors().commit("a", lsns[300]);
            wal.cursors().delete("b");
        }
        assertThat(work.resolve(CursorFile.CHECKPOINT)).exists();
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            assertThat(wal.cursors().list()).extracting(Cursors.Cursor::name).containsExactly("a");
            assertThat(wal.cursors().position("a")).isEqualTo(lsns[300]);
        }
        Files.delete(work.resolve(CursorFile.CHECKPOINT)); // as after a crash: the log itself is read
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            assertThat(wal.cursors().position("a")).isEqualTo(lsns[300]);
            assertThat(wal.cursors().list()).hasSize(1);
        }
    }

    @Test
    void aCommittedCursorSurvivesTheProcessBeingKilled() throws Exception {
        Path log = work.resolve("log");
        Path stderr = work.resolve("child.err");
        long acknowledged = -1;
        try (ChildJvm child = ChildJvm.start(CursorCommitter.class, stderr, log.toString())) {
            assertThat(child.awaitReady(60, TimeUnit.SECONDS)).as("child started (see %s)", stderr).isTrue();
            assertThat(Eventually.holds(() -> child.lines().size() >= 50)).as("child commits (see %s)", stderr).isTrue();
            child.kill();
            for (String line : child.lines()) {
                if (line.startsWith("C ")) {
                    acknowledged = Long.parseLong(line.substring(2));
                }
            }
        }
        assertThat(acknowledged).as("commits acknowledged before the kill").isPositive();
        try (Wal wal = Wal.open(WalConfig.builder(log).segmentSize(TestLogs.SMALL_SEGMENT).build())) {
            assertThat(wal.cursors().position(CursorCommitter.NAME)).isGreaterThanOrEqualTo(acknowledged);
            try (WalReader r = wal.cursors().reader(CursorCommitter.NAME)) {
                r.next(); // the cursor is a record boundary of the recovered log
            }
        }
    }

    @Test
    void aCursorHoldsBackTruncationUntilItLagsBeyondTheCapAndIsThenLostCountedAndRecoverable() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        try (Wal wal = Wal.open(TestLogs.small(work).maxCursorRetainedBytes(200_000).build())) {
            wal.meterBinder().bindTo(meters);
            long[] lsns = fill(wal, 200);
            wal.cursors().create("slow", lsns[5]);
            wal.truncateBefore(wal.flushedLsn());
            assertThat(wal.oldestLsn()).as("held back by the cursor").isLessThanOrEqualTo(lsns[5]);
            assertThat(meters.get("walden.cursor.lag.bytes").tag("cursor", "slow").gauge().value())
                    .isEqualTo(wal.insertLsn() - lsns[5]);

            long[] more = fill(wal, 3000); // far more than 200 kB behind now
            wal.truncateBefore(wal.flushedLsn());
            assertThat(wal.oldestLsn()).isGreaterThan(lsns[5]);
            assertThat(wal.cursors().list().get(0).lost()).isTrue();
            assertThat(meters.get("walden.cursor.lost").counter().count()).isEqualTo(1.0);
            assertThatThrownBy(() -> wal.cursors().reader("slow")).isInstanceOf(LsnRemovedException.class);

            wal.cursors().commit("slow", more[2999]);
            assertThat(wal.cursors().list().get(0).lost()).isFalse();
            try (WalReader r = wal.cursors().reader("slow")) {
                assertThat(read(r)).containsExactly("2999");
            }
        }
    }

    @Test
    void cursorsWhoseControlRecordsWereTruncatedAwayAreKnownAtTheNextOpen() throws Exception {
        long[] lsns;
        // A small cap, so that truncation may pass the cursor and remove the segments of its control records.
        try (Wal wal = Wal.open(TestLogs.small(work).maxCursorRetainedBytes(100_000).build())) {
            lsns = fill(wal, 100);
            wal.cursors().create("early", lsns[1]);
            wal.cursors().create("gone", lsns[1]);
            wal.cursors().delete("gone");
            wal.cursors().commit("early", lsns[99]);
            long[] later = fill(wal, 2000);
            wal.truncateBefore(later[1500]);
            assertThat(wal.oldestLsn()).as("the control records' segments are gone").isGreaterThan(lsns[99]);
        }
        Files.delete(work.resolve(CursorFile.CHECKPOINT)); // only the base file and the log remain
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            assertThat(wal.cursors().list()).extracting(Cursors.Cursor::name).containsExactly("early");
            assertThat(wal.cursors().position("early")).isEqualTo(lsns[99]);
            assertThat(wal.cursors().list().get(0).lost()).isTrue();
        }
    }

    @Test
    void aReplicaKnowsItsPrimarysCursorsRefusesChangesAndOwnsThemOncePromoted() {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal replica = Replicas.open(primary, work.resolve("replica"))) {
            long[] lsns = fill(primary, 50);
            primary.cursors().create("c", lsns[10]);
            primary.cursors().commit("c", lsns[40]);
            Replicas.catchUp(primary, replica);
            assertThat(replica.cursors().position("c")).isEqualTo(lsns[40]);
            assertThatThrownBy(() -> replica.cursors().commit("c", lsns[45])).isInstanceOf(AppendsRefusedException.class);
            assertThat(work.resolve("replica").resolve(CursorFile.BASE)).as("the replica reads them at its next open").exists();

            replica.replication().promote();
            replica.cursors().commit("c", lsns[45]);
            assertThat(replica.cursors().position("c")).isEqualTo(lsns[45]);
        }
    }

    @Test
    void aReplicaThatIsRewoundForgetsTheCursorChangesItRemoved() throws Exception {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal behind = Replicas.open(primary, work.resolve("behind"));
             Wal ahead = Replicas.open(primary, work.resolve("ahead"))) {
            long[] lsns = fill(primary, 50);
            primary.cursors().create("c", lsns[10]);
            Replicas.catchUp(primary, behind);
            primary.cursors().commit("c", lsns[40]);
            primary.cursors().create("late", lsns[1]);
            Replicas.catchUp(primary, ahead);
            assertThat(ahead.cursors().position("c")).isEqualTo(lsns[40]);

            long switchPoint = behind.insertLsn();
            behind.replication().promote();
            ahead.replication().rewindTo(switchPoint);
            assertThat(ahead.cursors().position("c")).isEqualTo(lsns[10]);
            assertThat(ahead.cursors().list()).extracting(Cursors.Cursor::name).containsExactly("c");
        }
    }

    /**
     * An old primary demoted, rewound and caught up with its successor, whose record spans the old end: the cursors (the
     * status, the cursor API and truncation read them) must not read the log from the removed end.
     */
    @Test
    void anOldPrimaryRewoundToFollowItsSuccessorStillListsItsCursorsAndTruncates() {
        try (Wal a = Wal.open(TestLogs.small(work.resolve("a")).build());
             Wal b = Replicas.open(a, work.resolve("b"))) {
            fill(a, 10);
            Replicas.catchUp(a, b);
            long switchPoint = b.insertLsn();
            a.append(TestLogs.bytes("lost"), Durability.OFF); // a's short tail, which b never got
            a.flush();
            long oldEnd = a.insertLsn();
            b.replication().promote();
            b.append(TestLogs.bytes("x".repeat(200)), Durability.OFF); // one record spanning a's old end
            b.flush();

            a.replication().refuseAppends(Replicas.REFUSAL); // demoted: its cursors are as of its old end
            a.replication().rewindTo(switchPoint);
            a.replication().adoptHistory(b.status().history());
            Replicas.catchUp(b, a);
            assertThat(a.readLimit()).isGreaterThan(oldEnd);

            assertThat(a.cursors().list()).isEmpty();
            a.truncateBefore(a.oldestLsn());
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            a.meterBinder().bindTo(registry); // what /metrics scrapes, every meter read once
            registry.getMeters().forEach(m -> m.measure().forEach(Measurement::getValue));
            assertThat(a.status().segments()).isNotEmpty();
        }
    }

    @Test
    void aCursorsLagInTimeIsHowLongAgoTheLogsEndPassedIt() throws Exception {
        try (Wal wal = Wal.open(TestLogs.small(work).checkpointInterval(Duration.ofMillis(20)).build())) {
            long start = wal.insertLsn();
            wal.cursors().create("c", start);
            fill(wal, 3);
            long appended = System.nanoTime();
            // the background writer samples the end every 20 ms
            assertThat(Eventually.holds(() -> wal.cursors().list().get(0).lagSeconds() > 0)).isTrue();
            double lag = wal.cursors().list().get(0).lagSeconds();
            assertThat(lag).as("the end passed the cursor after the appends, at most this long ago")
                    .isGreaterThan(0.0).isLessThanOrEqualTo((System.nanoTime() - appended) / 1e9 + 0.05);
            wal.cursors().commit("c", wal.insertLsn());
            assertThat(wal.cursors().list().get(0).lagSeconds()).as("caught up").isZero();
        }
    }

    @Test
    void damagedCursorFilesDoNotKeepTheLogFromOpeningAndTheLogRebuildsTheCursors() throws Exception {
        long[] lsns;
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            lsns = fill(wal, 10);
            wal.cursors().create("c", lsns[4]);
        }
        Files.writeString(work.resolve(CursorFile.CHECKPOINT), "as-of 0/FFFF\ncursor c 0/40\ncrc 0\n");
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            assertThat(wal.cursors().position("c")).as("from the base file and the log").isEqualTo(lsns[4]);
        }
        Files.writeString(work.resolve(CursorFile.BASE), "garbage");
        Files.writeString(work.resolve(CursorFile.CHECKPOINT), "garbage");
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            assertThat(wal.cursors().position("c")).as("from the log alone").isEqualTo(lsns[4]);
        }
    }

    @Test
    void theCheckpointFileFollowsTheFlushedCursorsSoThatOpeningAfterACrashReadsLittleOfTheLog() throws Exception {
        try (Wal wal = Wal.open(TestLogs.small(work).checkpointInterval(Duration.ofMillis(20)).build())) {
            long[] lsns = fill(wal, 400);
            wal.cursors().create("c", lsns[1]);
            wal.cursors().commit("c", lsns[300]);
            long committedAt = wal.insertLsn();
            // The background writer's ticks (every 20 ms) write it.
            Eventually.holds(() -> {
                CursorFile.Snapshot written = CursorFile.read(work, CursorFile.CHECKPOINT);
                return written != null && written.asOf() >= committedAt;
            });
            CursorFile.Snapshot checkpoint = CursorFile.read(work, CursorFile.CHECKPOINT);
            assertThat(checkpoint).isNotNull();
            assertThat(checkpoint.asOf()).as("as of a flushed LSN past the commit").isGreaterThanOrEqualTo(committedAt);
            assertThat(checkpoint.cursors()).containsEntry("c", lsns[300]);
        }
    }

    @Test
    void aCorruptApplicationRecordDoesNotKeepTheLogFromOpeningOrItsCursorsFromBeingRead() throws Exception {
        long bad;
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            wal.cursors().create("c", wal.insertLsn());
            byte[] event = CompressionTest.jsonEvent(1);
            bad = wal.append(0, event, 0, event.length, Durability.LOCAL, Compression.LZ4);
            wal.cursors().commit("c", wal.insertLsn());
        }
        CompressionTest.forgeStoredPayload(work, bad, stored -> Arrays.fill(stored, 4, stored.length, (byte) 0xFF));
        Files.delete(work.resolve(CursorFile.CHECKPOINT)); // the cursors are read from the log, past the damaged record
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            assertThat(wal.cursors().position("c")).isGreaterThan(bad);
            try (WalReader r = wal.reader(bad)) {
                assertThatThrownBy(r::next).isInstanceOf(WalCorruptedException.class); // readers still refuse it
            }
        }
    }

    @Test
    void aCheckpointFilePastTheLogsEndIsDeletedAndNeverTrusted() throws Exception {
        long[] lsns;
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            lsns = fill(wal, 10);
            wal.cursors().create("c", lsns[2]);
        }
        CursorFile.write(work, CursorFile.CHECKPOINT, new CursorFile.Snapshot(lsns[9] + 100_000,
                Map.of("c", lsns[9], "ghost", lsns[1])));
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            assertThat(wal.cursors().list()).extracting(Cursors.Cursor::name).containsExactly("c");
            assertThat(wal.cursors().position("c")).isEqualTo(lsns[2]);
        }
    }

    @Test
    void aReplicaReopenedShowsOnlyTheCursorChangesItsPrimaryHadFlushed() {
        long[] lsns;
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build())) {
            try (Wal replica = Replicas.open(primary, work.resolve("replica"))) {
                lsns = fill(primary, 20);
                primary.cursors().create("c", lsns[5]);
                Replicas.catchUp(primary, replica);
                primary.cursors().commit("c", lsns[15]);
                Replicas.copyWritten(primary, replica); // received and flushed, but no word of the primary's flush
                assertThat(replica.cursors().position("c")).isEqualTo(lsns[5]);
            }
            try (Wal replica = Replicas.open(primary, work.resolve("replica"))) {
                assertThat(replica.cursors().position("c")).as("after a restart too").isEqualTo(lsns[5]);
                replica.replication().raiseReadLimit(primary.flushedLsn());
                assertThat(replica.cursors().position("c")).isEqualTo(lsns[15]);
            }
        }
    }

    @Test
    void anLsnStillInTheWalBuffersIsProvenBeforeACursorTakesIt() {
        try (Wal wal = Wal.open(TestLogs.small(work).writerDelay(Duration.ofSeconds(60))
                .offWriteDelay(Duration.ofSeconds(60)).build())) {
            long a = wal.append(TestLogs.bytes("x".repeat(500)), Durability.OFF);
            long b = wal.append(TestLogs.bytes("y".repeat(500)), Durability.OFF);
            assertThatThrownBy(() -> wal.cursors().create("c", a + 8)).isInstanceOf(IllegalLsnException.class);
            wal.cursors().create("c", b);
            assertThat(wal.cursors().position("c")).isEqualTo(b);
        }
    }

    @Test
    void aCursorAtTheLogsFirstLsnStartsAtItsFirstRecordAndIsNotLost() {
        try (Wal wal = Wal.open(TestLogs.small(work).build())) {
            long[] lsns = fill(wal, 3);
            wal.cursors().create("c", 0);
            assertThat(wal.cursors().position("c")).isEqualTo(lsns[0]);
            assertThat(wal.cursors().list().get(0).lost()).isFalse();
        }
    }
}
