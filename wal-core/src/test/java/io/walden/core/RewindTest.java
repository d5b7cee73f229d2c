package io.walden.core;

import io.walden.core.internal.recovery.LogInspector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link io.walden.core.replication.ReplicatedLog#rewindTo}: a replica removes the records its primary never had (docs/replication.md, "Shipping before the
 * flush"), durably, and then holds exactly the primary's log.
 */
class RewindTest {
    @TempDir
    Path work;

    private static List<String> payloads(Wal wal) {
        List<String> out = new ArrayList<>();
        try (WalReader r = wal.reader(wal.oldestLsn(), WalReader.Visibility.WRITTEN)) {
            for (WalRecord rec; (rec = r.next()) != null; ) {
                out.add(TestLogs.string(rec.payload()));
            }
        }
        return out;
    }

    private static List<Path> segments(Path dir) throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(".wal")).sorted().toList();
        }
    }

    @Test
    void aReplicaRewindsToWhereItsEpochEndedInThePromotedLogAndThenHoldsItByteForByte() throws Exception {
        long written;
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal behind = Replicas.open(primary, work.resolve("behind"));
             Wal ahead = Replicas.open(primary, work.resolve("ahead"))) {
            for (int i = 0; i < 1000; i++) {
                primary.append(TestLogs.bytes("shared " + i), Durability.OFF);
            }
            primary.flush();
            Replicas.catchUp(primary, behind);
            for (int i = 0; i < 3000; i++) {
                primary.append(TestLogs.bytes("lost " + i + " " + "x".repeat(i % 50)), Durability.OFF);
            }
            primary.flush();
            Replicas.catchUp(primary, ahead);
            assertThat(segments(work.resolve("ahead")).size()).isGreaterThan(segments(work.resolve("behind")).size());

            long switchPoint = behind.insertLsn();
            behind.replication().promote(); // the replica that was behind becomes the primary; its bytes are epoch 2's prefix
            for (int i = 0; i < 500; i++) {
                behind.append(TestLogs.bytes("new " + i), Durability.OFF);
            }
            behind.flush();

            long end = ahead.insertLsn();
            assertThat(behind.status().history().rewindPoint(ahead.status().history().at(end), end)).isEqualTo(switchPoint);
            assertThat(ahead.replication().rewindTo(switchPoint)).isEqualTo(end - switchPoint);
            assertThat(ahead.insertLsn()).isEqualTo(switchPoint);
            assertThat(ahead.flushedLsn()).isEqualTo(switchPoint);
            ahead.replication().adoptHistory(behind.status().history());
            Replicas.catchUp(behind, ahead);
            assertThat(payloads(ahead)).isEqualTo(payloads(behind)).hasSize(1500).noneMatch(p -> p.startsWith("lost"));
            written = behind.insertLsn();
        }
        assertThat(WrittenSegments.assertIdentical(work.resolve("behind"), work.resolve("ahead"), written)).isPositive();
        assertThat(new LogInspector(work.resolve("ahead")).inspect(new LogInspector.Visitor() { }).clean()).isTrue();
    }

    @Test
    void aRewindIsDurableWhenTheProcessIsKilledRightAfterIt() throws Exception {
        Path dir = work.resolve("replica");
        long point = -1;
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal replica = Replicas.open(primary, dir)) {
            for (int i = 0; i < 3000; i++) {
                long lsn = primary.append(TestLogs.bytes("record " + i), Durability.OFF);
                if (i == 700) {
                    point = lsn;
                }
            }
            primary.flush();
            Replicas.catchUp(primary, replica);
            assertThat(payloads(replica)).hasSize(3000);
        }
        try (ChildJvm child = ChildJvm.start(RewindingReplica.class, work.resolve("child.err"), dir.toString(),
                Long.toString(point))) {
            assertThat(child.awaitReady(60, TimeUnit.SECONDS)).isTrue();
            Eventually.holdsWithin(60, () -> child.lines().contains("REWOUND"));
            assertThat(child.lines()).as("see %s", work.resolve("child.err")).contains("REWOUND");
            child.kill();
        }
        try (Wal reopened = Wal.open(TestLogs.small(dir).build())) {
            assertThat(reopened.status().recoveryReport().shutDownCleanly()).isFalse();
            assertThat(reopened.insertLsn()).isEqualTo(point);
            List<String> left = payloads(reopened);
            assertThat(left).hasSize(700).endsWith("record 699");
        }
    }

    @Test
    void aLogThatAcceptsAppendsIsNeverRewound() {
        try (Wal wal = Wal.open(TestLogs.small(work.resolve("log")).build())) {
            long first = wal.append(TestLogs.bytes("one"), Durability.LOCAL);
            wal.append(TestLogs.bytes("two"), Durability.LOCAL);
            assertThatThrownBy(() -> wal.replication().rewindTo(first)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("only a replica");
            assertThat(payloads(wal)).containsExactly("one", "two");
        }
    }

    @Test
    void aRewindToAnLsnInsideARecordIsRefusedAndRemovesNothing() {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal replica = Replicas.open(primary, work.resolve("replica"))) {
            long first = primary.append(TestLogs.bytes("one"), Durability.LOCAL);
            primary.append(TestLogs.bytes("two"), Durability.LOCAL);
            Replicas.catchUp(primary, replica);
            long end = replica.insertLsn();
            assertThatThrownBy(() -> replica.replication().rewindTo(first + 8)).isInstanceOf(IllegalStateException.class);
            assertThat(replica.insertLsn()).isEqualTo(end);
            assertThat(replica.status().isFailed()).isFalse();
            assertThat(payloads(replica)).containsExactly("one", "two");
        }
    }

    @Test
    void aRewindToOrPastTheEndRemovesNothing() {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal replica = Replicas.open(primary, work.resolve("replica"))) {
            primary.append(TestLogs.bytes("one"), Durability.LOCAL);
            Replicas.catchUp(primary, replica);
            assertThat(replica.replication().rewindTo(replica.insertLsn())).isZero();
            assertThat(payloads(replica)).containsExactly("one");
        }
    }
}
