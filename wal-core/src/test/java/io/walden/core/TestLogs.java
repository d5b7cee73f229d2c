package io.walden.core;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;

/** Small helpers shared by the wal-core tests. */
public final class TestLogs {
    /** Small segments so that tests roll often. */
    public static final long SMALL_SEGMENT = 64 << 10;

    private TestLogs() {
    }

    public static WalConfig.Builder small(Path dir) {
        return WalConfig.builder(dir).segmentSize(SMALL_SEGMENT);
    }

    /** Small segments, and a background writer that stays asleep for the length of a test: only the test flushes. */
    public static void writersAsleep(WalConfig.Builder b) {
        b.segmentSize(SMALL_SEGMENT).writerDelay(Duration.ofSeconds(30)).offWriteDelay(Duration.ofSeconds(30));
    }

    /**
     * Waits until a log's record clock has gone idle, so that the next append reads the wall clock itself. A sleep, not a
     * wait on a condition: the cached clock (CachedWallClock) stops ticking after 10 ms without a read, a rule of time.
     */
    public static void letRecordClockIdle() throws InterruptedException {
        Thread.sleep(100);
    }

    /**
     * A time after every record appended before this call and at or before every record appended after it returns (on
     * this machine's clock, in this or another process): the record clock only ever lags the wall clock, and is exact
     * again once idle.
     */
    public static Instant timeBetweenAppends() throws InterruptedException {
        Instant between = Instant.now().plusNanos(1000); // record times are in microseconds
        letRecordClockIdle();
        return between;
    }

    /**
     * Pauses for a random time from {@code fromMillis} to {@code toMillis}. A sleep, not a wait on a condition: where in
     * a run an event lands (a kill, a close, a restart) is what the test varies.
     */
    public static void pauseRandomly(Random random, int fromMillis, int toMillis) throws InterruptedException {
        Thread.sleep(fromMillis + random.nextInt(toMillis - fromMillis));
    }

    public static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Every record's payload as text, from the log's oldest record to what its readers may see. */
    public static List<String> payloads(Wal wal) {
        List<String> out = new ArrayList<>();
        try (WalReader r = wal.reader(wal.oldestLsn())) {
            for (WalRecord rec; (rec = r.next()) != null; ) {
                out.add(string(rec.payload()));
            }
        }
        return out;
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
