package io.walden.core;

import io.walden.core.replication.WriteStage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** A replica's write stage: the one place that decides when received bytes are forced (and so reported flushed). */
class WriteStageTest {
    @TempDir
    Path work;

    @Test
    void forcesOnceNothingMoreIsQueued() {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("p")).build());
             Wal replica = Replicas.open(primary, work.resolve("r"))) {
            primary.append(TestLogs.bytes("one"), Durability.LOCAL);
            WriteStage stage = replica.replication().writeStage();
            ReplicationChunk chunk = primary.replication().readFlushed(replica.insertLsn(), 1 << 20);
            long written = stage.write(chunk.startLsn(), chunk.bytes());

            assertThat(replica.flushedLsn()).as("writing forces nothing").isLessThan(written);
            assertThat(stage.flushIfDue(false)).isTrue();
            assertThat(replica.flushedLsn()).isEqualTo(written);
        }
    }

    @Test
    void putsTheForceOffWhileMoreIsQueuedWithinItsBounds() {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("p")).build());
             Wal replica = Replicas.open(primary, work.resolve("r"))) {
            primary.append(TestLogs.bytes("one"), Durability.LOCAL);
            WriteStage stage = replica.replication().writeStage();
            stage.flushWritten(); // the bound on time counts from here
            ReplicationChunk chunk = primary.replication().readFlushed(replica.insertLsn(), 1 << 20);
            long written = stage.write(chunk.startLsn(), chunk.bytes());

            boolean forced = stage.flushIfDue(true);
            assertThat(forced).as("forced only when a millisecond passed since the last force (a slow minute)")
                    .isEqualTo(replica.flushedLsn() == written);
            assertThat(stage.flushWritten()).isEqualTo(!forced);
            assertThat(replica.flushedLsn()).isEqualTo(written);
        }
    }

    @Test
    void neverPutsTheForceOffPastItsByteBound() {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("p")).segmentSize(64L << 20).build());
             Wal replica = Wal.open(WalConfig.builder(work.resolve("r")).segmentSize(64L << 20)
                     .logId(primary.status().logId()).build())) {
            replica.replication().refuseAppends(Replicas.REFUSAL);
            byte[] payload = new byte[64 << 10];
            for (int i = 0; i < 80; i++) { // 5 MiB: past the bound
                primary.append(payload, Durability.OFF);
            }
            primary.flush();
            WriteStage stage = replica.replication().writeStage();
            long unforced = 0;
            for (ReplicationChunk chunk; (chunk = primary.replication().readFlushed(replica.insertLsn(), 256 << 10)) != null; ) {
                long flushedBefore = replica.flushedLsn();
                int length = chunk.bytes().remaining();
                stage.write(chunk.startLsn(), chunk.bytes());
                unforced = stage.flushIfDue(true) ? 0 : unforced + length;
                assertThat(flushedBefore).isLessThanOrEqualTo(replica.flushedLsn());
                assertThat(unforced).as("bytes written and not yet forced").isLessThan(WriteStage.MAX_UNFLUSHED_BYTES);
            }
            assertThat(replica.insertLsn()).isEqualTo(primary.insertLsn());
        }
    }

    @Test
    void hasNothingToForceWhenEverythingWrittenIsFlushed() {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("p")).build());
             Wal replica = Replicas.open(primary, work.resolve("r"))) {
            assertThat(replica.replication().writeStage().flushWritten()).isFalse();
        }
    }
}
