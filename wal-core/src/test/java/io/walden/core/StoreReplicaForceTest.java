package io.walden.core;

import io.walden.core.internal.sync.ForceTarget;
import io.walden.core.internal.sync.SyncStrategy;
import io.walden.core.replication.WriteStage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link WriteStage#flushIfDue(boolean, Runnable)}: a replica's receiver, which many logs share, starts each log's force
 * and goes on without waiting for it (docs/replication.md, "A replica's receivers"). A store's replica logs forced so
 * share the journal's force, run on the journal's own thread; the receiver learns the end through the callback.
 */
@Timeout(60)
class StoreReplicaForceTest {
    @TempDir
    Path dir;

    /** A journal sync that holds its forces until {@link #open} (and counts them). */
    private static final class GatedSync implements SyncStrategy {
        private final SyncStrategy real = SyncStrategy.of(SyncMethod.FDATASYNC);
        final CountDownLatch gate = new CountDownLatch(1);
        volatile int forces;
        volatile boolean failing;

        @Override
        public void force(ForceTarget segment, long fromOffset, long toOffset) throws IOException {
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted");
            }
            forces++;
            if (failing) {
                throw new IOException("Input/output error (injected)");
            }
            real.force(segment, fromOffset, toOffset);
        }
    }

    private static WalStore store(Path dir, SyncStrategy journalSync) {
        return WalStore.open(WalStoreConfig.builder(dir)
                .journalSettings(b -> b.segmentSize(TestLogs.SMALL_SEGMENT).syncStrategy(journalSync))
                .defaults(TestLogs::writersAsleep).build());
    }

    /** A primary log with one record, and its replica log in {@code replicas}, the record written and not yet forced. */
    private static WriteStage replicaWithOneRecordWritten(WalStore primaries, WalStore replicas, String name) {
        Wal primary = primaries.create(name);
        primary.append(TestLogs.bytes("one of " + name), Durability.LOCAL);
        Wal replica = replicas.create(name, b -> b.logId(primary.status().logId()));
        replica.replication().refuseAppends(Replicas.REFUSAL);
        WriteStage stage = replica.replication().writeStage();
        ReplicationChunk chunk = primary.replication().readFlushed(replica.insertLsn(), 1 << 20);
        stage.write(chunk.startLsn(), chunk.bytes());
        return stage;
    }

    @Test
    void sixteenLogsForcesStartWithoutWaitingAndEndInAtMostTwoForcesOfTheJournal() throws Exception {
        GatedSync journal = new GatedSync();
        try (WalStore primaries = store(dir.resolve("p"), SyncStrategy.of(SyncMethod.FDATASYNC));
             WalStore replicas = store(dir.resolve("r"), journal)) {
            List<WriteStage> stages = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                stages.add(replicaWithOneRecordWritten(primaries, replicas, "log-" + i));
            }
            CountDownLatch told = new CountDownLatch(16);
            List<String> threads = new ArrayList<>();
            for (WriteStage stage : stages) {
                assertThat(stage.flushIfDue(false, () -> {
                    synchronized (threads) {
                        threads.add(Thread.currentThread().getName());
                    }
                    told.countDown();
                })).as("a force started").isTrue(); // and returned, while the journal's force is held
            }
            for (int i = 0; i < 16; i++) {
                Wal log = replicas.log("log-" + i).orElseThrow();
                assertThat(log.flushedLsn()).as("nothing flushed before the journal's force").isLessThan(log.writtenLsn());
            }

            journal.gate.countDown();

            assertThat(told.await(10, TimeUnit.SECONDS)).as("every log told its force ended").isTrue();
            for (int i = 0; i < 16; i++) {
                Wal log = replicas.log("log-" + i).orElseThrow();
                assertThat(log.flushedLsn()).as("log-" + i + " flushed").isEqualTo(log.writtenLsn());
            }
            assertThat(journal.forces).as("forces of the journal for 16 logs").isBetween(1, 2);
            // Not a writer thread: a log's writer may be waiting there for the very round this force ends.
            assertThat(threads).as("told on the journal's force thread, which waits for no log").containsOnly("walden-journal-force");
        }
    }

    @Test
    void aLogWhoseWrittenBytesAreFlushedStartsNoForce() {
        try (WalStore primaries = store(dir.resolve("p"), SyncStrategy.of(SyncMethod.FDATASYNC));
             WalStore replicas = store(dir.resolve("r"), SyncStrategy.of(SyncMethod.FDATASYNC))) {
            WriteStage stage = replicaWithOneRecordWritten(primaries, replicas, "orders");
            stage.flushWritten();

            assertThat(stage.flushIfDue(false, () -> {
                throw new AssertionError("no force started, so nothing is told");
            })).isFalse();
        }
    }

    @Test
    void aFailedForceOfTheJournalTellsTheReceiverAndFailsTheLogWithoutMovingItsFlushedPosition() throws Exception {
        GatedSync journal = new GatedSync();
        journal.failing = true;
        journal.gate.countDown();
        try (WalStore primaries = store(dir.resolve("p"), SyncStrategy.of(SyncMethod.FDATASYNC));
             WalStore replicas = store(dir.resolve("r"), journal)) {
            WriteStage stage = replicaWithOneRecordWritten(primaries, replicas, "orders");
            Wal log = replicas.log("orders").orElseThrow();
            long flushedBefore = log.flushedLsn();
            CountDownLatch told = new CountDownLatch(1);

            assertThat(stage.flushIfDue(false, told::countDown)).isTrue();

            assertThat(told.await(10, TimeUnit.SECONDS)).as("told that the force ended").isTrue();
            assertThat(log.status().isFailed()).as("the log failed").isTrue();
            assertThat(log.flushedLsn()).as("never reported flushed").isEqualTo(flushedBefore);
            assertThat(stage.flushIfDue(false, () -> {
                throw new AssertionError("a failed log starts no force, so nothing is told");
            })).as("a failed log starts no further force (a receiver would start one after each end, for ever)").isFalse();
        }
    }

    @Test
    void aLogOfItsOwnIsForcedOnTheCallersThreadAndToldBeforeTheCallReturns() {
        try (Wal primary = Wal.open(TestLogs.small(dir.resolve("p")).build());
             Wal replica = Replicas.open(primary, dir.resolve("r"))) {
            primary.append(TestLogs.bytes("one"), Durability.LOCAL);
            WriteStage stage = replica.replication().writeStage();
            ReplicationChunk chunk = primary.replication().readFlushed(replica.insertLsn(), 1 << 20);
            long written = stage.write(chunk.startLsn(), chunk.bytes());
            List<String> told = new ArrayList<>();

            assertThat(stage.flushIfDue(false, () -> told.add(Thread.currentThread().getName()))).isTrue();

            assertThat(told).as("told once, on this thread, before the call returned")
                    .containsExactly(Thread.currentThread().getName());
            assertThat(replica.flushedLsn()).isEqualTo(written);
        }
    }
}
