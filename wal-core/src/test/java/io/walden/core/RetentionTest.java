package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import static io.walden.core.TestLogs.SMALL_SEGMENT;
import static org.assertj.core.api.Assertions.assertThat;

/** Retention by size and by time (docs/operations.md, "Retention"), and the holders that keep it back. */
class RetentionTest {
    private static final long LIMIT = 4 * SMALL_SEGMENT;

    @TempDir
    Path dir;

    /** Appends {@code bytes} of 1000-byte records numbered from {@code first}; returns the next number. */
    private static long feed(Wal wal, long first, long bytes) {
        long n = first;
        for (long written = 0; written < bytes; written += 1000, n++) {
            wal.append(ByteBuffer.allocate(1000).putLong(0, n).array(), Durability.OFF);
        }
        wal.flush();
        return n;
    }

    /** Waits until retention removed {@code atLeast} segments and the log is as {@code settled} expects it. */
    private static void awaitRemoval(Wal wal, long atLeast, Eventually.Check settled) throws Exception {
        Eventually.waitUntil(() -> wal.status().retention().removedSegments() >= atLeast && settled.holds());
    }

    /** From the oldest record to the end, retention's size limit allows: the limit and the segment being written. */
    private static boolean withinLimit(Wal wal) {
        return wal.insertLsn() - wal.oldestLsn() <= LIMIT + SMALL_SEGMENT;
    }

    private static long directorySize(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".wal")).mapToLong(f -> f.toFile().length()).sum();
        }
    }

    /** Every record from the oldest on reads back, numbered without a gap up to {@code next - 1}. */
    private static void assertContiguousTo(Wal wal, long next) {
        try (WalReader r = wal.reader(wal.oldestLsn())) {
            WalRecord first = r.next();
            long expected = first.payloadView().order(java.nio.ByteOrder.BIG_ENDIAN).getLong(0) + 1;
            for (WalRecord rec; (rec = r.next()) != null; expected++) {
                assertThat(rec.payloadView().order(java.nio.ByteOrder.BIG_ENDIAN).getLong(0)).isEqualTo(expected);
            }
            assertThat(expected).isEqualTo(next);
        }
    }

    @Test
    void aLogFedTenTimesItsSizeLimitStaysWithinItAndReadsBackFromItsOldestRecord() throws Exception {
        try (Wal wal = Wal.open(TestLogs.small(dir).retentionBytes(LIMIT).build())) {
            long next = feed(wal, 0, 10 * LIMIT);
            awaitRemoval(wal, 20, () -> withinLimit(wal) && directorySize(dir) <= LIMIT + 3 * SMALL_SEGMENT);
            long live = (wal.insertLsn() - wal.oldestLsn());
            assertThat(live).as("from the oldest record to the end").isLessThanOrEqualTo(LIMIT + SMALL_SEGMENT);
            assertThat(directorySize(dir)).as("segment files: the kept ones, the one prepared ahead and up to 2 spares")
                    .isLessThanOrEqualTo(LIMIT + 3 * SMALL_SEGMENT);
            assertThat(wal.status().retention().removedSegments()).isGreaterThanOrEqualTo(30);
            assertContiguousTo(wal, next);
        }
    }

    @Test
    void segmentsWhoseRecordsAreAllOlderThanTheTimeLimitGo() throws Exception {
        RecordTimeTest.SteppedClock clock = new RecordTimeTest.SteppedClock(Instant.parse("2026-11-20T00:00:00Z"));
        try (Wal wal = Wal.open(TestLogs.small(dir).clock(clock).retentionTime(Duration.ofDays(1)).build())) {
            long next = feed(wal, 0, 6 * SMALL_SEGMENT);
            TestLogs.letRecordClockIdle(); // the next record reads the clock itself: it carries the time set below
            clock.now.set(Instant.parse("2026-11-25T00:00:00Z")); // five days on
            long recent = wal.insertLsn();
            next = feed(wal, next, 2 * SMALL_SEGMENT);
            awaitRemoval(wal, 6, () -> wal.oldestLsn() > recent - SMALL_SEGMENT);
            assertThat(wal.oldestLsn()).as("every segment of old records went").isGreaterThan(recent - SMALL_SEGMENT);
            try (WalReader r = wal.reader(wal.oldestLsn())) {
                WalRecord first = r.next();
                assertThat(first.timestamp()).as("the oldest kept record is the last old one, or a new one")
                        .isIn(Instant.parse("2026-11-20T00:00:00Z"), Instant.parse("2026-11-25T00:00:00Z"));
            }
            assertContiguousTo(wal, next);
        }
    }

    @Test
    void aCursorHoldsRetentionBackAndIsNamedAsTheHolderUntilItMoves() throws Exception {
        try (Wal wal = Wal.open(TestLogs.small(dir).retentionBytes(LIMIT).build())) {
            long start = wal.insertLsn();
            wal.cursors().create("slow-consumer", start);
            long next = feed(wal, 0, 3 * LIMIT);
            Eventually.waitUntil("retention looked at the fed log", () -> wal.status().retention().heldBy().stream()
                    .anyMatch(h -> h.bytes() > LIMIT));
            assertThat(wal.oldestLsn()).as("the cursor keeps its records").isLessThanOrEqualTo(start);
            RetentionStatus status = wal.status().retention();
            assertThat(status.heldBy()).singleElement().satisfies(h -> {
                assertThat(h.holder()).isEqualTo("cursor");
                assertThat(h.bytes()).isGreaterThan(LIMIT);
                assertThat(h.fromLsn()).isEqualTo(start);
            });

            wal.cursors().commit("slow-consumer", wal.insertLsn());
            feed(wal, next, SMALL_SEGMENT);
            awaitRemoval(wal, 4, () -> wal.oldestLsn() > start && wal.status().retention().heldBy().isEmpty());
            assertThat(wal.oldestLsn()).isGreaterThan(start);
            assertThat(wal.status().retention().heldBy()).isEmpty();
        }
    }

    @Test
    void aReplicaAppliesItsOwnRetentionToWhatItReceives() throws Exception {
        try (Wal primary = Wal.open(TestLogs.small(dir.resolve("primary")).build());
             Wal replica = Wal.open(TestLogs.small(dir.resolve("replica")).logId(primary.status().logId())
                     .retentionBytes(LIMIT).build())) {
            replica.replication().refuseAppends(Replicas.REFUSAL);
            // The primary keeps no archive, and says so (as its sender does): nothing is kept for an archive.
            replica.replication().primaryArchived(primary.replication().archivedFloor());
            long next = feed(primary, 0, 10 * LIMIT);
            Replicas.catchUp(primary, replica);
            awaitRemoval(replica, 20, () -> withinLimit(replica));
            assertThat(replica.insertLsn() - replica.oldestLsn()).isLessThanOrEqualTo(LIMIT + SMALL_SEGMENT);
            assertThat(primary.oldestLsn()).as("the primary, without a limit, keeps everything").isEqualTo(64);
            assertContiguousTo(replica, next);
        }
    }

    /**
     * A look reads each holder's floor once: what it says a replication slot holds is what its removal kept, even when
     * the slot moves on at every ask (a replica acknowledging as fast as it is asked).
     */
    @Test
    void whatALookSaysASlotHoldsIsWhatItKeepsWhileTheSlotMoves() throws Exception {
        RecordTimeTest.SteppedClock clock = new RecordTimeTest.SteppedClock(Instant.parse("2026-11-20T00:00:00Z"));
        long second = SMALL_SEGMENT + 64; // the first record of the second segment
        AtomicBoolean moving = new AtomicBoolean();
        AtomicLong asks = new AtomicLong();
        try (Wal wal = Wal.open(TestLogs.small(dir).clock(clock).retentionBytes(LIMIT).build())) {
            // Still, the slot holds everything; moving, it is one segment further at each ask, from the second one.
            wal.replication().retentionFloor(() -> moving.get() ? second + asks.getAndIncrement() * SMALL_SEGMENT : 64);
            feed(wal, 0, 3 * LIMIT);
            assertThat(Eventually.holds(() -> !wal.status().retention().heldBy().isEmpty())).isTrue();
            Thread.sleep(300); // the look at the last new segment finishes; the clock stands, so no other look comes
            assertThat(wal.oldestLsn()).as("the slot kept everything").isEqualTo(64);

            moving.set(true);
            clock.now.set(clock.now.get().plus(Duration.ofMinutes(1))); // time passed: one more look
            assertThat(Eventually.holds(() -> wal.status().retention().removedSegments() > 0)).isTrue();
            assertThat(wal.status().retention().heldBy()).singleElement().satisfies(h -> {
                assertThat(h.holder()).isEqualTo("replication_slot");
                assertThat(h.fromLsn()).isEqualTo(second);
            });
            assertThat(wal.oldestLsn()).as("the look removed exactly what it said the slot let go").isEqualTo(second);
        }
    }

    @Test
    void withoutLimitsNothingIsRemoved() throws Exception {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            feed(wal, 0, 10 * LIMIT);
            assertThat(wal.status().retention().enabled()).as("no look is ever made").isFalse();
            assertThat(wal.oldestLsn()).isEqualTo(64);
        }
    }
}
