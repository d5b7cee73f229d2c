package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The adaptive batching must not delay a lone committer: its durable append costs about what a plain
 * write-into-the-mapping + force loop costs on the same disk, measured side by side in this run (median
 * of interleaved rounds, generous bound; the real figures come from wal-bench).
 */
class LoneCommitterTest {
    private static final int ROUNDS = 5;
    private static final int COMMITS = 150;

    @TempDir
    Path dir;

    @Test
    void shouldNotDelayALoneCommitterBeyondAPlainForceLoop() throws Exception {
        long[] walden = new long[ROUNDS];
        long[] plain = new long[ROUNDS];
        try (Wal wal = Wal.open(WalConfig.builder(dir.resolve("log")).segmentSize(16L << 20).build());
             FileChannel ch = FileChannel.open(dir.resolve("plain.dat"), StandardOpenOption.CREATE,
                     StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            MappedByteBuffer map = preallocatedMap(ch, 16L << 20);
            byte[] payload = new byte[64];
            byte[] record = new byte[88];
            int pos = 0;
            for (int warm = 0; warm < 50; warm++) {
                wal.append(payload, Durability.LOCAL);
            }
            for (int r = 0; r < ROUNDS; r++) {
                long t0 = System.nanoTime();
                for (int i = 0; i < COMMITS; i++) {
                    wal.append(payload, Durability.LOCAL);
                }
                walden[r] = System.nanoTime() - t0;
                t0 = System.nanoTime();
                for (int i = 0; i < COMMITS; i++) {
                    map.put(pos, record);
                    pos += record.length;
                    ch.force(false);
                }
                plain[r] = System.nanoTime() - t0;
            }
            assertThat(wal.status().flushCount()).as("a lone committer leads its own flushes").isGreaterThanOrEqualTo(ROUNDS * COMMITS);
        }
        double ratio = (double) median(walden) / median(plain);
        System.out.printf("lone committer: walden %.1f us/commit, plain mmap+force %.1f us/commit, ratio %.2f%n",
                median(walden) / 1000.0 / COMMITS, median(plain) / 1000.0 / COMMITS, ratio);
        assertThat(ratio).as("walden / plain force loop").isLessThan(2.0);
    }

    private static MappedByteBuffer preallocatedMap(FileChannel ch, long size) throws IOException {
        ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
        for (long p = 0; p < size; ) {
            zeros.clear();
            p += ch.write(zeros, p);
        }
        ch.force(true);
        return ch.map(FileChannel.MapMode.READ_WRITE, 0, size);
    }

    private static long median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
