package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every record carries its append time (docs/format.md, "Records"), and the log finds records by time. */
public class RecordTimeTest {
    @TempDir
    Path dir;

    /** A wall clock the test sets, stepping it forward or back (here and in the record clock's own tests). */
    public static final class SteppedClock extends Clock {
        public final AtomicReference<Instant> now;

        public SteppedClock(Instant start) {
            this.now = new AtomicReference<>(start);
        }

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now.get();
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static List<WalRecord> all(Wal wal) {
        List<WalRecord> out = new ArrayList<>();
        try (WalReader r = wal.reader(wal.oldestLsn())) {
            for (WalRecord rec; (rec = r.next()) != null; ) {
                out.add(rec);
            }
        }
        return out;
    }

    @Test
    void aRecordCarriesTheWallClockOfItsAppendToTheMillisecond() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            Instant before = Instant.now();
            wal.append(bytes("now"), Durability.LOCAL);
            Instant after = Instant.now();
            WalRecord r = all(wal).get(0);
            assertThat(r.timestamp()).isBetween(before.minusMillis(5), after.plusMillis(5));
        }
    }

    @Test
    void timesNeverDecreaseWhenTheClockStepsBack() throws Exception {
        SteppedClock clock = new SteppedClock(Instant.parse("2026-11-25T14:32:00Z"));
        try (Wal wal = Wal.open(TestLogs.small(dir).clock(clock).build())) {
            wal.append(bytes("at 14:32"), Durability.LOCAL);
            TestLogs.letRecordClockIdle();
            clock.now.set(Instant.parse("2026-11-25T14:00:00Z")); // NTP stepped the clock back half an hour
            wal.append(bytes("after the step"), Durability.LOCAL);
            TestLogs.letRecordClockIdle();
            clock.now.set(Instant.parse("2026-11-25T14:40:00Z"));
            wal.append(bytes("caught up"), Durability.LOCAL);

            List<WalRecord> records = all(wal);
            assertThat(records.get(0).timestamp()).isEqualTo(Instant.parse("2026-11-25T14:32:00Z"));
            assertThat(records.get(1).timestamp()).as("the last time is kept").isEqualTo(Instant.parse("2026-11-25T14:32:00Z"));
            assertThat(records.get(2).timestamp()).isEqualTo(Instant.parse("2026-11-25T14:40:00Z"));
        }
    }

    @Test
    void aLogReopenedUnderAClockSetBackGoesOnFromItsLastTime() throws Exception {
        SteppedClock clock = new SteppedClock(Instant.parse("2026-11-25T10:00:00Z"));
        try (Wal wal = Wal.open(TestLogs.small(dir).clock(clock).build())) {
            wal.append(bytes("before"), Durability.LOCAL);
        }
        clock.now.set(Instant.parse("2026-11-25T09:00:00Z"));
        try (Wal wal = Wal.open(TestLogs.small(dir).clock(clock).build())) {
            wal.append(bytes("after reopening"), Durability.LOCAL);
            assertThat(all(wal).get(1).timestamp()).isEqualTo(Instant.parse("2026-11-25T10:00:00Z"));
        }
    }

    @Test
    void lsnAtFindsTheFirstRecordAtOrAfterATimeAcrossManySegments() throws Exception {
        SteppedClock clock = new SteppedClock(Instant.parse("2026-01-01T00:00:00Z"));
        List<Long> lsns = new ArrayList<>();
        try (Wal wal = Wal.open(TestLogs.small(dir).clock(clock).build())) {
            for (int minute = 0; minute < 60; minute++) {
                clock.now.set(Instant.parse("2026-01-01T00:00:00Z").plus(Duration.ofMinutes(minute)));
                TestLogs.letRecordClockIdle();
                lsns.add(wal.append(new byte[1500], Durability.OFF)); // a new time for the first of every minute
                for (int i = 0; i < 20; i++) {
                    wal.append(new byte[1500], Durability.OFF);
                }
            }
            wal.flush();
            assertThat(wal.status().segmentCount()).as("the log spans many segments").isGreaterThan(25);
            for (int minute = 0; minute < 60; minute += 7) {
                Instant t = Instant.parse("2026-01-01T00:00:00Z").plus(Duration.ofMinutes(minute));
                assertThat(wal.lsnAt(t)).as("minute %d", minute).isEqualTo(lsns.get(minute));
                assertThat(wal.lsnAt(t.minusSeconds(30))).as("between minutes").isEqualTo(lsns.get(minute));
            }
            assertThat(wal.lsnAt(Instant.parse("2025-01-01T00:00:00Z"))).as("before every record").isEqualTo(lsns.get(0));
            assertThat(wal.lsnAt(Instant.parse("2027-01-01T00:00:00Z"))).as("after every record").isEqualTo(wal.insertLsn());
        }
    }

    @Test
    void aReaderFromAnInstantStartsAtTheFirstRecordThatRecent() throws Exception {
        SteppedClock clock = new SteppedClock(Instant.parse("2026-11-25T10:00:00Z"));
        try (Wal wal = Wal.open(TestLogs.small(dir).clock(clock).build())) {
            wal.append(bytes("at 10:00"), Durability.LOCAL);
            TestLogs.letRecordClockIdle();
            clock.now.set(Instant.parse("2026-11-25T11:00:00Z"));
            wal.append(bytes("at 11:00"), Durability.LOCAL);
            try (WalReader r = wal.reader(Instant.parse("2026-11-25T10:30:00Z"))) {
                assertThat(new String(r.next().payload(), StandardCharsets.UTF_8)).isEqualTo("at 11:00");
                assertThat(r.next()).isNull();
            }
        }
    }

    @Test
    void aReplicaShowsItsPrimarysTimesAndAPromotedReplicaGoesOnFromThem() throws Exception {
        SteppedClock primaryClock = new SteppedClock(Instant.parse("2030-06-01T12:00:00Z")); // ahead of the replica's
        try (Wal primary = Wal.open(TestLogs.small(dir.resolve("primary")).clock(primaryClock).build());
             Wal replica = Replicas.open(primary, dir.resolve("replica"))) {
            primary.append(bytes("from the primary"), Durability.LOCAL);
            Replicas.catchUp(primary, replica);
            assertThat(all(replica).get(0).timestamp()).isEqualTo(Instant.parse("2030-06-01T12:00:00Z"));

            primary.replication().refuseAppends("the replica takes over");
            replica.replication().promote();
            replica.append(bytes("from the promoted replica"), Durability.LOCAL);
            assertThat(all(replica).get(1).timestamp()).as("never before its primary's last time")
                    .isEqualTo(Instant.parse("2030-06-01T12:00:00Z"));
        }
    }

    @Test
    void recordTimesPrintAndParseAsRfc3339WithMicroseconds() {
        Instant t = Instant.parse("2026-11-25T17:03:04.123456789Z");
        assertThat(RecordTime.format(t)).isEqualTo("2026-11-25T17:03:04.123456Z");
        assertThat(RecordTime.parse("2026-11-25T18:03:04.5+01:00")).isEqualTo(Instant.parse("2026-11-25T17:03:04.500Z"));
        assertThat(RecordTime.ofMicros(RecordTime.toMicros(t))).isEqualTo(Instant.parse("2026-11-25T17:03:04.123456Z"));
        assertThatThrownBy(() -> RecordTime.parse("yesterday")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("RFC 3339");
    }

    @Test
    void anOffsetWithoutAColonIsReadAsIso8601WritesIt() {
        assertThat(RecordTime.parse("2026-11-26T19:36:43.692030+0000"))
                .isEqualTo(Instant.parse("2026-11-26T19:36:43.692030Z"));
        assertThat(RecordTime.parse("2026-11-26T20:36:43+0100")).isEqualTo(Instant.parse("2026-11-26T19:36:43Z"));
        assertThat(RecordTime.parse("2026-11-26t19:36:43z")).as("RFC 3339 allows either case")
                .isEqualTo(Instant.parse("2026-11-26T19:36:43Z"));
        assertThatThrownBy(() -> RecordTime.parse("2026-11-26T19:36:43")).as("no offset: which zone is unknown")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("RFC 3339");
    }

    @Test
    void aTimeBeyondWhatARecordTimeHoldsIsRefusedNamingTheRange() {
        for (String t : List.of("+300000-01-01T00:00:00Z", "-300000-01-01T00:00:00Z", "+999999999-12-31T23:59:59Z")) {
            assertThatThrownBy(() -> RecordTime.parse(t)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(t).hasMessageContaining("outside the times a record can hold")
                    .hasMessageContaining(RecordTime.format(RecordTime.MIN) + " to " + RecordTime.format(RecordTime.MAX));
        }
        assertThatThrownBy(() -> RecordTime.toMicros(Instant.MAX)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("outside the times a record can hold");
        assertThat(RecordTime.toMicros(RecordTime.MAX)).isEqualTo(Long.MAX_VALUE);
        assertThat(RecordTime.ofMicros(RecordTime.toMicros(RecordTime.MIN))).isEqualTo(RecordTime.MIN);
        assertThat(RecordTime.parse(RecordTime.format(RecordTime.MAX))).isEqualTo(RecordTime.MAX);
    }

    @Test
    void theLogFindsNoRecordAtATimeBeyondTheRangeAndSaysWhy() throws Exception {
        try (Wal wal = Wal.open(WalConfig.builder(dir).build())) {
            wal.append(bytes("one"), Durability.LOCAL);
            assertThatThrownBy(() -> wal.lsnAt(Instant.parse("+300000-01-01T00:00:00Z")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("outside the times a record can hold");
        }
    }
}
