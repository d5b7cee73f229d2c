package io.walden.core;

import io.walden.core.internal.IdleRing;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;
import static io.walden.core.internal.PartsForTests.idleRing;
import static io.walden.core.internal.PartsForTests.ring;

/**
 * An idle log gives its WAL buffers' memory back to the system ({@link IdleRing}) and takes it again at its next
 * append, losing and damaging nothing, even when appenders arrive in the middle of it.
 */
@Timeout(120) // a ring put back wrong shows as a log that stops moving: a failure, not a hung build
class IdleRingTest {
    private static final long RING = 4L << 20;

    @TempDir
    Path dir;

    private Wal open() {
        return Wal.open(WalConfig.builder(dir).segmentSize(16L << 20).walBuffers(RING).build());
    }

    @Test
    void anIdleLogsWalBuffersGoBackToTheSystem() throws IOException {
        try (Wal wal = open()) {
            byte[] kib = new byte[1024];
            for (int i = 0; i < 6 * 1024; i++) { // more than the ring: every page of it touched
                wal.append(0, kib, 0, kib.length, Durability.OFF);
            }
            wal.flush();
            long address = ring(wal.parts()).address;
            long before = residentKiB(address);
            assertThat(idleRing(wal.parts()).trim()).isTrue();
            long after = residentKiB(address);
            assertThat(before - after).as("KiB given back (resident %d before, %d after)", before, after)
                    .isGreaterThanOrEqualTo((RING >> 10) * 9 / 10);
            assertThat(idleRing(wal.parts()).trims()).isEqualTo(1);
        }
    }

    @Test
    void aLogThatNeverAppendedHoldsNoMemoryForItsWalBuffers() throws IOException {
        long ring = 32L << 20;
        try (Wal wal = Wal.open(WalConfig.builder(dir).segmentSize(64L << 20).walBuffers(ring).build())) {
            // The ring's own pages: the whole process's would count what tests beside this one allocate meanwhile.
            long resident = residentKiB(ring(wal.parts()).address);
            assertThat(resident).as("resident KiB of a log's %d KiB of WAL buffers, never appended to", ring >> 10)
                    .isLessThan((ring >> 10) / 16);
            long lsn = wal.append(TestLogs.bytes("first"), Durability.LOCAL); // and the ring works as a zeroed one
            try (WalReader r = wal.reader(lsn)) {
                assertThat(TestLogs.string(r.next().payload())).isEqualTo("first");
            }
        }
    }

    @Test
    void aLogWhoseWalBuffersWentBackAppendsAndRecoversEveryRecord() {
        List<Long> lsns = new ArrayList<>();
        try (Wal wal = open()) {
            for (int i = 0; i < 100; i++) {
                lsns.add(wal.append(TestLogs.bytes("before " + i), Durability.LOCAL));
            }
            assertThat(idleRing(wal.parts()).trim()).isTrue();
            for (int i = 0; i < 100; i++) {
                lsns.add(wal.append(TestLogs.bytes("after " + i), i % 2 == 0 ? Durability.OFF : Durability.LOCAL));
            }
        }
        try (Wal wal = open(); WalReader r = wal.reader(lsns.get(0))) {
            for (int i = 0; i < 200; i++) {
                WalRecord rec = r.next();
                assertThat(rec.lsn()).isEqualTo(lsns.get(i));
                assertThat(TestLogs.string(rec.payload())).isEqualTo((i < 100 ? "before " : "after ") + (i % 100));
            }
            assertThat(r.next()).isNull();
        }
    }

    @Test
    void appendersArrivingWhileTheWalBuffersGoBackLoseAndDamageNothing() throws Exception {
        Map<Long, byte[]> acknowledged = new ConcurrentHashMap<>();
        AtomicBoolean stop = new AtomicBoolean();
        long trims;
        try (Wal wal = open()) {
            List<Thread> appenders = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int writer = t;
                Thread a = new Thread(() -> {
                    SplittableRandom random = new SplittableRandom(writer);
                    for (long seq = 0; !stop.get(); seq++) {
                        byte[] p = TestLogs.payload(writer, seq, 3000);
                        acknowledged.put(wal.append(0, p, 0, p.length,
                                random.nextBoolean() ? Durability.OFF : Durability.LOCAL), p);
                        if (random.nextInt(50) == 0) {
                            // A pause between bursts, so that the log is idle now and then (the trimmer's chance).
                            LockSupport.parkNanos(random.nextInt(2_000_000));
                        }
                    }
                }, "appender-" + t);
                a.start();
                appenders.add(a);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            while (System.nanoTime() < deadline) {
                wal.flush(); // written out, so that a trim may find the log idle
                idleRing(wal.parts()).trim();
            }
            stop.set(true);
            for (Thread a : appenders) {
                a.join();
            }
            trims = idleRing(wal.parts()).trims();
        }
        assertThat(trims).as("trims that raced the appenders").isPositive();
        try (Wal wal = open(); WalReader r = wal.reader(wal.oldestLsn())) {
            int found = 0;
            for (WalRecord rec; (rec = r.next()) != null; ) {
                byte[] expected = acknowledged.get(rec.lsn());
                assertThat(expected).as("record %s was appended", Lsn.format(rec.lsn())).isNotNull();
                assertThat(rec.payload()).isEqualTo(expected);
                found++;
            }
            assertThat(found).isEqualTo(acknowledged.size());
        }
    }

    /** Resident KiB of the mapping of this process that holds {@code address} (/proc/self/smaps). */
    private static long residentKiB(long address) throws IOException {
        boolean inside = false;
        for (String line : Files.readAllLines(Path.of("/proc/self/smaps"))) {
            if (Character.isDigit(line.charAt(0)) || (line.charAt(0) >= 'a' && line.charAt(0) <= 'f' && line.indexOf('-') > 0
                    && line.indexOf(' ') > line.indexOf('-'))) {
                String[] range = line.substring(0, line.indexOf(' ')).split("-");
                inside = Long.parseUnsignedLong(range[0], 16) <= address && address < Long.parseUnsignedLong(range[1], 16);
            } else if (inside && line.startsWith("Rss:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new AssertionError("no mapping holds " + Long.toHexString(address));
    }
}
