package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A replica's read limit (docs/replication.md, "Shipping before the flush"): readers, appliers and cascading senders
 * of a replica see only what its primary reported flushed, so nothing they saw can be rewound.
 */
class ReplicaReadLimitTest {
    @TempDir
    Path work;

    private static int count(Wal wal, WalReader.Visibility visibility) {
        int n = 0;
        try (WalReader r = wal.reader(wal.oldestLsn(), visibility)) {
            while (r.next() != null) {
                n++;
            }
        }
        return n;
    }

    /** A primary with 100 records, and a replica holding all of them, flushed, with no word of the primary's flush. */
    private long[] fill(Wal primary, Wal replica) {
        long[] lsns = new long[100];
        for (int i = 0; i < lsns.length; i++) {
            lsns[i] = primary.append(TestLogs.bytes("record " + i), Durability.OFF);
        }
        primary.flush(); // written there, so that the replica gets it
        Replicas.copyWritten(primary, replica);
        return lsns;
    }

    @Test
    void aReplicasReadersSeeNothingItsPrimaryHasNotReportedFlushedEvenWhenTheReplicaFlushedIt() {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal replica = Replicas.open(primary, work.resolve("replica"))) {
            long[] lsns = fill(primary, replica);
            assertThat(replica.flushedLsn()).isGreaterThan(lsns[99]);
            assertThat(count(replica, WalReader.Visibility.FLUSHED)).isZero();
            assertThat(count(replica, WalReader.Visibility.WRITTEN)).isZero();

            replica.replication().raiseReadLimit(lsns[50]); // the primary flushed records 0..49
            assertThat(count(replica, WalReader.Visibility.FLUSHED)).isEqualTo(50);
            assertThat(replica.readLimit()).isEqualTo(lsns[50]);
        }
    }

    @Test
    void theReadLimitOnlyMovesForward() {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal replica = Replicas.open(primary, work.resolve("replica"))) {
            long[] lsns = fill(primary, replica);
            replica.replication().raiseReadLimit(lsns[60]);
            replica.replication().raiseReadLimit(lsns[10]);
            assertThat(replica.readLimit()).isEqualTo(lsns[60]);
        }
    }

    @Test
    void aReplicaReopenedKeepsTheReadLimitItHadAndDoesNotWidenIt() {
        Path dir = work.resolve("replica");
        long limit;
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal replica = Replicas.open(primary, dir)) {
            long[] lsns = fill(primary, replica);
            limit = lsns[30];
            replica.replication().raiseReadLimit(limit);
        }
        try (Wal reopened = Wal.open(TestLogs.small(dir).build())) {
            assertThat(reopened.readLimit()).isEqualTo(limit);
            reopened.replication().refuseAppends(Replicas.REFUSAL);
            assertThat(reopened.readLimit()).isEqualTo(limit);
            assertThat(count(reopened, WalReader.Visibility.FLUSHED)).isEqualTo(30);
        }
    }

    @Test
    void aCascadingSenderShipsNothingBeyondTheReadLimit() {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal replica = Replicas.open(primary, work.resolve("replica"))) {
            long[] lsns = fill(primary, replica);
            replica.replication().raiseReadLimit(lsns[20]);
            assertThat(replica.replication().shippableLsn(true)).isEqualTo(lsns[20]);
            assertThat(replica.replication().shippableLsn(false)).isEqualTo(lsns[20]);
            ReplicationChunk chunk = replica.replication().readWritten(replica.oldestLsn(), 1 << 20);
            assertThat(chunk.endLsn()).isEqualTo(lsns[20]);
            assertThat(replica.replication().readWritten(lsns[20], 1 << 20)).isNull();
            assertThatThrownBy(() -> replica.replication().readWritten(lsns[21], 1 << 20)).isInstanceOf(IllegalLsnException.class);
        }
    }

    @Test
    void aReplicaServesItsWholeFlushedTailForACopyAndTheReplicaThatTakesItHoldsEveryRecordAtTheSameLsnAfterPromotion() {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal ahead = Replicas.open(primary, work.resolve("ahead"));
             Wal behind = Replicas.open(primary, work.resolve("behind"))) {
            long[] lsns = new long[100];
            for (int i = 0; i < lsns.length; i++) {
                lsns[i] = primary.append(TestLogs.bytes("record " + i), Durability.OFF);
                if (i == 59) {
                    primary.flush();
                    Replicas.copyWritten(primary, behind); // behind gets records 0..59 only
                }
            }
            primary.flush();
            Replicas.copyWritten(primary, ahead);
            ahead.replication().raiseReadLimit(lsns[40]); // the primary had reported only 0..39 flushed, then was lost
            long from = behind.insertLsn();
            assertThat(from).isEqualTo(lsns[60]);
            assertThatThrownBy(() -> ahead.replication().readFlushed(from, 1 << 20))
                    .as("a sender stops at the read limit").isInstanceOf(IllegalLsnException.class);

            ReplicationChunk bounded = ahead.replication().readHeld(from, lsns[70], 1 << 20);
            assertThat(bounded.startLsn()).isEqualTo(from);
            assertThat(bounded.endLsn()).as("no record at or past the end asked for").isEqualTo(lsns[70]);
            long position = from;
            for (ReplicationChunk chunk; (chunk = ahead.replication().readHeld(position, Long.MAX_VALUE, 512)) != null; ) {
                position = behind.replication().writeReceived(chunk.startLsn(), chunk.bytes());
            }
            behind.flush();
            assertThat(behind.flushedLsn()).isEqualTo(ahead.flushedLsn());
            behind.replication().promote();
            long next = behind.append(TestLogs.bytes("the new epoch's first"), Durability.LOCAL);

            try (WalReader original = primary.reader(primary.oldestLsn(), WalReader.Visibility.FLUSHED);
                 WalReader copy = behind.reader(behind.oldestLsn(), WalReader.Visibility.FLUSHED)) {
                for (long lsn : lsns) {
                    WalRecord o = original.next();
                    WalRecord c = copy.next();
                    assertThat(c.lsn()).isEqualTo(lsn).isEqualTo(o.lsn());
                    assertThat(c.payload()).isEqualTo(o.payload());
                }
                assertThat(copy.next().lsn()).as("appends continue the copied chain").isEqualTo(next);
            }
        }
    }

    @Test
    void promotionLiftsTheReadLimit() {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build());
             Wal replica = Replicas.open(primary, work.resolve("replica"))) {
            fill(primary, replica);
            replica.replication().promote(); // its bytes are the new epoch's prefix: nothing can rewind them now
            assertThat(replica.readLimit()).isEqualTo(Long.MAX_VALUE);
            assertThat(count(replica, WalReader.Visibility.FLUSHED)).isEqualTo(100);
        }
    }

    @Test
    void aPrimarysLogHasNoReadLimit() {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).build())) {
            primary.append(TestLogs.bytes("one"), Durability.LOCAL);
            primary.replication().raiseReadLimit(0);
            assertThat(primary.readLimit()).isEqualTo(Long.MAX_VALUE);
            assertThat(count(primary, WalReader.Visibility.FLUSHED)).isEqualTo(1);
        }
    }
}
