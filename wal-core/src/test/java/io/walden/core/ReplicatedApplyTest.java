package io.walden.core;

import io.walden.core.internal.record.RecordDescriptor;
import io.walden.core.internal.recovery.LogInspector;
import io.walden.core.internal.segment.SegmentFiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.walden.core.TestLogs.SMALL_SEGMENT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What a replica's receiver will do with the primary's Data frames: apply the primary's log bytes verbatim,
 * checked record by record, so that the replica's segments come out byte-identical.
 */
class ReplicatedApplyTest {
    @TempDir
    Path work;

    /** The primary's log as data frames: whole records, never crossing a segment, in chunks of at most {@code max} bytes. */
    private static List<long[]> frames(Path primary, int max) throws Exception {
        List<long[]> ranges = new ArrayList<>(); // {start, end}
        long[] current = {-1, -1};
        new LogInspector(primary).inspect(new LogInspector.Visitor() {
            @Override
            public boolean onRecord(LogInspector.RecordInfo r) {
                long end = r.lsn() + RecordDescriptor.aligned(r.length());
                boolean sameSegment = current[0] >= 0 && (current[0] & -SMALL_SEGMENT) == (r.lsn() & -SMALL_SEGMENT);
                if (current[0] < 0 || !sameSegment || current[1] != r.lsn() || end - current[0] > max) {
                    if (current[0] >= 0) {
                        ranges.add(current.clone());
                    }
                    current[0] = r.lsn();
                }
                current[1] = end;
                return true;
            }
        });
        if (current[0] >= 0) {
            ranges.add(current.clone());
        }
        return ranges;
    }

    private static ByteBuffer read(Path dir, long start, long end) throws Exception {
        byte[] seg = Files.readAllBytes(dir.resolve(SegmentFiles.name(start & -SMALL_SEGMENT)));
        int from = (int) (start & (SMALL_SEGMENT - 1));
        return ByteBuffer.wrap(seg, from, (int) (end - start)).slice();
    }

    @Test
    void shouldApplyAPrimarysBytesAndEndUpWithByteIdenticalSegments() throws Exception {
        Path primaryDir = work.resolve("primary");
        Path replicaDir = work.resolve("replica");
        long logId;
        Random random = new Random(7);
        try (Wal primary = Wal.open(TestLogs.small(primaryDir).build())) {
            logId = primary.status().logId();
            for (int i = 0; i < 3000; i++) {
                byte[] p = new byte[random.nextInt(700)];
                random.nextBytes(p);
                primary.append(i % 5, p, Durability.OFF);
                if (i % 500 == 0) {
                    primary.claim(1, 40, new WalClaim()).abort(); // padding in the middle of a segment
                }
            }
        }
        List<long[]> frames = frames(primaryDir, 3000);
        assertThat(frames.size()).isGreaterThan(20);
        try (Wal replica = Wal.open(TestLogs.small(replicaDir).logId(logId).build())) {
            replica.replication().refuseAppends("this log is a replica of primary 127.0.0.1:7401; write to the primary");
            for (long[] f : frames) {
                long end = replica.replication().writeReceived(f[0], read(primaryDir, f[0], f[1]));
                assertThat(end).isGreaterThanOrEqualTo(f[1]);
            }
            replica.flush();
            assertThatThrownBy(() -> replica.append(new byte[1], Durability.OFF))
                    .isInstanceOf(AppendsRefusedException.class).hasMessageContaining("replica of primary");
        }
        for (long seg : SegmentFiles.list(primaryDir)) {
            Path p = primaryDir.resolve(SegmentFiles.name(seg));
            Path r = replicaDir.resolve(SegmentFiles.name(seg));
            if (Files.exists(r)) {
                assertThat(Files.mismatch(p, r)).as("segment %s", p.getFileName()).isEqualTo(-1L);
            }
        }
        assertThat(new LogInspector(replicaDir).inspect(new LogInspector.Visitor() { }).clean()).isTrue();
    }

    @Test
    void shouldNeverWriteTheWalBuffersOverBytesAReplicaApplied() throws Exception {
        // A replica's bytes go to its files directly; a writer that saw them published but not yet written would write
        // the ring's zeros for that range over them. Flushes run back to back beside the applier to hit that window.
        Path primaryDir = work.resolve("primary");
        Path replicaDir = work.resolve("replica");
        long logId;
        Random random = new Random(11);
        try (Wal primary = Wal.open(TestLogs.small(primaryDir).build())) {
            logId = primary.status().logId();
            for (int i = 0; i < 3000; i++) {
                byte[] p = new byte[random.nextInt(700)];
                random.nextBytes(p);
                primary.append(p, Durability.OFF);
            }
        }
        List<long[]> frames = frames(primaryDir, 3000);
        try (Wal replica = Wal.open(TestLogs.small(replicaDir).logId(logId).writerDelay(Duration.ofMillis(1)).build())) {
            replica.replication().refuseAppends("a replica");
            AtomicBoolean done = new AtomicBoolean();
            Thread flusher = new Thread(() -> {
                while (!done.get()) {
                    replica.flush();
                }
            });
            flusher.start();
            try {
                for (long[] f : frames) {
                    replica.replication().writeReceived(f[0], read(primaryDir, f[0], f[1]));
                }
            } finally {
                done.set(true);
                flusher.join();
            }
            replica.flush();
        }
        for (long seg : SegmentFiles.list(primaryDir)) {
            Path r = replicaDir.resolve(SegmentFiles.name(seg));
            if (Files.exists(r)) {
                assertThat(Files.mismatch(primaryDir.resolve(SegmentFiles.name(seg)), r)).as("segment %x", seg).isEqualTo(-1L);
            }
        }
    }

    @Test
    void shouldStreamOnlyFlushedBytesFromALivePrimaryIntoAReplica() throws Exception {
        Path primaryDir = work.resolve("live-primary");
        Path replicaDir = work.resolve("live-replica");
        try (Wal primary = Wal.open(TestLogs.small(primaryDir).writerDelay(Duration.ofMillis(5)).build());
             Wal replica = Wal.open(TestLogs.small(replicaDir).logId(primary.status().logId()).build())) {
            AtomicBoolean done = new AtomicBoolean();
            List<Throwable> errors = new CopyOnWriteArrayList<>();
            Thread sender = new Thread(() -> { // what a primary's sender does, minus the network
                try {
                    long position = replica.insertLsn();
                    while (!done.get() || position < primary.flushedLsn()) {
                        ReplicationChunk chunk = primary.replication().readFlushed(position, 4096);
                        if (chunk == null) {
                            primary.replication().awaitFlushedPast(position, 50, TimeUnit.MILLISECONDS);
                            continue;
                        }
                        if (chunk.endLsn() > primary.flushedLsn()) {
                            errors.add(new AssertionError("sent bytes that were not flushed"));
                        }
                        position = replica.replication().writeReceived(chunk.startLsn(), chunk.bytes());
                        replica.flush();
                    }
                } catch (Throwable t) {
                    errors.add(t);
                }
            });
            sender.start();
            Random random = new Random(3);
            for (int i = 0; i < 4000; i++) {
                primary.append(i % 7, new byte[random.nextInt(500)], i % 10 == 0 ? Durability.LOCAL : Durability.OFF);
            }
            primary.flush();
            done.set(true);
            sender.join(30_000);
            assertThat(errors).isEmpty();
            assertThat(replica.flushedLsn()).isEqualTo(primary.flushedLsn());
        }
        for (long seg : SegmentFiles.list(primaryDir)) {
            Path r = replicaDir.resolve(SegmentFiles.name(seg));
            if (Files.exists(r)) {
                assertThat(Files.mismatch(primaryDir.resolve(SegmentFiles.name(seg)), r)).as("segment %x", seg).isEqualTo(-1L);
            }
        }
    }

    @Test
    void shouldRefuseAGapARepeatOrACorruptRecordAndKeepNothingOfIt() throws Exception {
        Path primaryDir = work.resolve("primary");
        long logId;
        try (Wal primary = Wal.open(TestLogs.small(primaryDir).build())) {
            logId = primary.status().logId();
            for (int i = 0; i < 50; i++) {
                primary.append(("record " + i).getBytes(), Durability.OFF);
            }
        }
        List<long[]> frames = frames(primaryDir, 400);
        try (Wal replica = Wal.open(TestLogs.small(work.resolve("replica")).logId(logId).build())) {
            assertThatThrownBy(() -> replica.replication().writeReceived(frames.get(1)[0], read(primaryDir, frames.get(1)[0], frames.get(1)[1])))
                    .isInstanceOf(IllegalLsnException.class).hasMessageContaining("ends at 0/40");
            ByteBuffer corrupt = read(primaryDir, frames.get(0)[0], frames.get(0)[1]);
            ByteBuffer copy = ByteBuffer.allocate(corrupt.remaining()).put(corrupt.duplicate()).flip();
            copy.put(copy.limit() - 40, (byte) (copy.get(copy.limit() - 40) ^ 1));
            long before = replica.insertLsn();
            assertThatThrownBy(() -> replica.replication().writeReceived(frames.get(0)[0], copy))
                    .isInstanceOf(WalCorruptedException.class).hasMessageContaining("nothing of this batch was kept");
            assertThat(replica.insertLsn()).isEqualTo(before);
            replica.replication().writeReceived(frames.get(0)[0], read(primaryDir, frames.get(0)[0], frames.get(0)[1]));
            assertThatThrownBy(() -> replica.replication().writeReceived(frames.get(0)[0], read(primaryDir, frames.get(0)[0], frames.get(0)[1])))
                    .isInstanceOf(IllegalLsnException.class);
            replica.flush();
            try (WalReader r = replica.reader(replica.oldestLsn())) {
                assertThat(new String(r.next().payload())).isEqualTo("record 0");
            }
        }
        assertThatThrownBy(() -> Wal.open(TestLogs.small(work.resolve("replica")).logId(logId + 1).build()))
                .isInstanceOf(WalCorruptedException.class).hasMessageContaining("copy of another log");
    }
}
