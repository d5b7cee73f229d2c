package io.walden.core;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.function.BooleanSupplier;

/** Small helpers shared by the wal-core tests. */
public final class TestLogs {
    /** Small segments so that tests roll often. */
    public static final long SMALL_SEGMENT = 64 << 10;

    private TestLogs() {
    }

    public static WalConfig.Builder small(Path dir) {
        return WalConfig.builder(dir).segmentSize(SMALL_SEGMENT);
    }

    /**
     * Polls the condition every 10 ms until it holds or ten seconds pass: a wait on what a test is about to assert,
     * never a fixed sleep that is too short on a slow minute and wasted on a fast one.
     *
     * @return whether it held in time
     */
    public static boolean eventually(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    public static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    public static String string(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    /** A deterministic payload for (writer, sequence): its length and contents are derivable from the pair. */
    public static byte[] payload(int writer, long seq, int maxLength) {
        SplittableRandom r = new SplittableRandom(writer * 1_000_003L + seq);
        byte[] b = new byte[r.nextInt(maxLength + 1)];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) r.nextInt(256);
        }
        return b;
    }

    public static boolean samePayload(byte[] a, byte[] b) {
        return Arrays.equals(a, b);
    }
}
