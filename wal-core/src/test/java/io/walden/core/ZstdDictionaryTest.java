package io.walden.core;

import io.walden.core.internal.recovery.LogInspector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static io.walden.core.internal.PartsForTests.dictionaries;

/**
 * zstd dictionaries (docs/format.md, "zstd dictionaries"): the log trains one on its first zstd payloads, compresses
 * small payloads with it, and keeps a copy of it before the first such record of every segment, so that truncation,
 * replication and inspection of any segment keep what they need; a record whose segment lacks its dictionary is
 * corruption, never data.
 */
class ZstdDictionaryTest {
    private static final long SEGMENT = 1 << 20;

    @TempDir
    Path work;

    @Test
    void smallZstdPayloadsAreStoredSmallerOnceTheLogHasTrainedADictionary() {
        long withDictionary;
        long without;
        try (Wal wal = Wal.open(WalConfig.builder(work.resolve("dictionary")).segmentSize(SEGMENT)
                .compression(Compression.ZSTD).build())) {
            appendUntilTrained(wal, 0);
            withDictionary = storedBytes(wal, 100_000, 200);
            assertReadBack(wal, 100_000, 200); // above every event appendUntilTrained can have appended
        }
        try (Wal wal = Wal.open(WalConfig.builder(work.resolve("alone")).segmentSize(SEGMENT)
                .compression(Compression.ZSTD).zstdDictionary(false).build())) {
            without = storedBytes(wal, 100_000, 200);
        }
        assertThat((double) withDictionary / without).as("stored with the dictionary / without").isLessThan(0.8);
    }

    @Test
    void aLogReopenedAtAnotherZstdLevelReadsWhatItWroteAndGoesOnWithItsDictionary() throws IOException {
        int n;
        try (Wal wal = Wal.open(TestLogs.small(work).compression(Compression.ZSTD).zstdLevel(1).build())) {
            n = appendUntilTrained(wal, 0);
            append(wal, n, 50);
        }
        try (Wal wal = Wal.open(TestLogs.small(work).compression(Compression.ZSTD).zstdLevel(19).build())) {
            append(wal, n + 50, 50); // compressed at 19 with the dictionary trained for level 1
            assertReadBack(wal, n, 100);
        }
        assertThat(new LogInspector(work).inspect(new LogInspector.Visitor() {
        }).problem()).isNull();
    }

    @Test
    void aReopenedLogGoesOnCompressingWithTheDictionaryItsLastSegmentHolds() throws IOException {
        long id;
        int n;
        try (Wal wal = Wal.open(TestLogs.small(work).compression(Compression.ZSTD).build())) {
            n = appendUntilTrained(wal, 0);
            append(wal, n, 10); // a copy in the last segment
            id = dictionaries(wal.parts()).active().id();
        }
        try (Wal wal = Wal.open(TestLogs.small(work).compression(Compression.ZSTD).build())) {
            long first = wal.append(CompressionTest.jsonEvent(n + 10), Durability.LOCAL); // looks in the log, in the background
            awaitDictionary(wal);
            assertThat(dictionaries(wal.parts()).active().id()).as("the one the log carries, not a new one").isEqualTo(id);
            try (WalReader r = wal.reader(first)) {
                assertThat(r.next().payload()).isEqualTo(CompressionTest.jsonEvent(n + 10));
            }
        }
        assertThat(new LogInspector(work).inspect(new LogInspector.Visitor() {
        }).problem()).isNull();
    }

    @Test
    void aPromotedReplicaCompressesWithItsPrimarysDictionary() {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).compression(Compression.ZSTD).build());
             Wal replica = Replicas.open(primary, work.resolve("replica"))) {
            int n = appendUntilTrained(primary, 0);
            append(primary, n, 10);
            primary.flush();
            Replicas.catchUp(primary, replica);
            assertThat(dictionaries(replica.parts()).active()).as("a replica compresses nothing").isNull();
            replica.replication().promote();
            byte[] event = CompressionTest.jsonEvent(n + 10);
            replica.append(0, event, 0, event.length, Durability.OFF, Compression.ZSTD); // looks in the log, in the background
            awaitDictionary(replica);
            assertThat(dictionaries(replica.parts()).active().id()).as("the primary's, not a new one")
                    .isEqualTo(dictionaries(primary.parts()).active().id());
        }
    }

    @Test
    void noDictionaryIsTrainedWhenTheLogIsToldNotTo() {
        try (Wal wal = Wal.open(TestLogs.small(work).compression(Compression.ZSTD).zstdDictionary(false).build())) {
            append(wal, 0, 500);
            assertThat(dictionaries(wal.parts()).active()).isNull();
            assertThat(controlRecords(wal)).isEmpty();
        }
    }

    @Test
    void everySegmentHoldsTheDictionaryBeforeItsFirstRecordCompressedWithIt() throws IOException {
        try (Wal wal = Wal.open(TestLogs.small(work).compression(Compression.ZSTD).build())) {
            int n = appendUntilTrained(wal, 0);
            long before = wal.insertLsn();
            append(wal, n, 6000);
            long segments = (wal.insertLsn() - before) / TestLogs.SMALL_SEGMENT;
            assertThat(segments).as("segments written with the dictionary").isGreaterThan(5);
            assertThat(controlRecords(wal)).as("copies of the dictionary").hasSizeGreaterThanOrEqualTo((int) segments);
            wal.flush();
        }
        // The inspector allows a record only the dictionaries met earlier in the same segment.
        LogInspector.Result result = new LogInspector(work).inspect(new LogInspector.Visitor() {
        });
        assertThat(result.problem()).isNull();
    }

    @Test
    void concurrentAppendersRollingSegmentsKeepEveryRecordBehindItsDictionary() throws Exception {
        int threads = 4;
        int perThread = 3000;
        try (Wal wal = Wal.open(TestLogs.small(work).compression(Compression.ZSTD).build())) {
            appendUntilTrained(wal, 0);
            long start = wal.insertLsn();
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int base = 100_000 * (t + 1);
                done.add(pool.submit(() -> append(wal, base, perThread)));
            }
            for (Future<?> f : done) {
                f.get();
            }
            pool.shutdown();
            wal.flush();
            assertThat((wal.insertLsn() - start) / TestLogs.SMALL_SEGMENT).as("segments").isGreaterThan(5);
            Map<Integer, Integer> next = new HashMap<>();
            try (WalReader r = wal.reader(start)) {
                WalRecord rec;
                while ((rec = r.next()) != null) {
                    int thread = sequence(rec.payload()) / 100_000;
                    int expected = 100_000 * thread + next.getOrDefault(thread, 0);
                    assertThat(rec.payload()).isEqualTo(CompressionTest.jsonEvent(expected));
                    next.merge(thread, 1, Integer::sum);
                }
            }
            assertThat(next.values()).containsOnly(perThread);
        }
        assertThat(new LogInspector(work).inspect(new LogInspector.Visitor() {
        }).problem()).isNull();
    }

    @Test
    void recordsCompressedWithADictionaryStayReadableAfterTheSegmentsBeforeThemAreTruncated() {
        List<Long> lsns = new ArrayList<>();
        int n;
        try (Wal wal = Wal.open(TestLogs.small(work).compression(Compression.ZSTD).build())) {
            n = appendUntilTrained(wal, 0);
            for (int i = n; i < n + 4000; i++) {
                lsns.add(wal.append(CompressionTest.jsonEvent(i), Durability.OFF));
            }
            wal.flush();
            wal.truncateBefore(lsns.get(3000));
            assertThat(wal.oldestLsn()).as("segments removed").isGreaterThan(lsns.get(1000));
        }
        try (Wal wal = Wal.open(TestLogs.small(work).compression(Compression.ZSTD).build());
             WalReader r = wal.reader(wal.oldestLsn())) {
            int first = lsns.indexOf(r.next().lsn());
            assertThat(first).isPositive();
            try (WalReader again = wal.reader(lsns.get(first))) {
                for (int i = first; i < lsns.size(); i++) {
                    WalRecord rec = again.next();
                    assertThat(rec.lsn()).isEqualTo(lsns.get(i));
                    assertThat(rec.payload()).isEqualTo(CompressionTest.jsonEvent(n + i));
                }
                assertThat(again.next()).isNull();
            }
        }
    }

    @Test
    void aReplicaReadsTheRecordsItsPrimaryCompressedWithADictionary() {
        try (Wal primary = Wal.open(TestLogs.small(work.resolve("primary")).compression(Compression.ZSTD).build());
             Wal replica = Replicas.open(primary, work.resolve("replica"))) {
            long first = primary.insertLsn();
            int n = appendUntilTrained(primary, 0);
            append(primary, n, 500);
            primary.flush();
            Replicas.catchUp(primary, replica);
            try (WalReader r = replica.reader(first)) {
                for (int i = 0; i < n + 500; i++) {
                    assertThat(r.next().payload()).isEqualTo(CompressionTest.jsonEvent(i));
                }
                assertThat(r.next()).isNull();
            }
        }
    }

    @Test
    void aLogRewoundPastItsCopyOfTheDictionaryWritesAnotherBeforeItsNextRecords() throws IOException {
        List<Long> kept = new ArrayList<>();
        try (Wal wal = Wal.open(TestLogs.small(work).compression(Compression.ZSTD).build())) {
            int n = appendUntilTrained(wal, 0);
            wal.append(CompressionTest.jsonEvent(n), Durability.OFF); // after a copy of the dictionary in this segment
            long copy = lastControlRecord(wal);
            // As a primary that lost an election: it becomes a replica, rewinds (here to the copy, which goes with the
            // rest), and is promoted again later.
            wal.replication().refuseAppends("test: a replica for a while");
            wal.replication().rewindTo(copy);
            wal.replication().promote();
            for (int i = n + 1; i < n + 21; i++) {
                kept.add(wal.append(CompressionTest.jsonEvent(i), Durability.OFF));
            }
            wal.flush();
        }
        LogInspector.Result result = new LogInspector(work).inspect(new LogInspector.Visitor() {
        });
        assertThat(result.problem()).as("the new records have a copy of their dictionary before them").isNull();
        try (Wal wal = Wal.open(TestLogs.small(work).compression(Compression.ZSTD).build());
             WalReader r = wal.reader(kept.get(0))) {
            for (int i = 0; i < kept.size(); i++) {
                assertThat(r.next().lsn()).isEqualTo(kept.get(i));
            }
        }
    }

    @Test
    void aRecordWhoseSegmentLacksItsDictionaryIsReportedAsCorruptionAndNeverReturned() throws IOException {
        long[] copyAndVictim = logWithCopiesInSeveralSegments();
        // The copy stays a valid record (its CRC is made to match) but no longer holds a dictionary.
        CompressionTest.forgeStoredPayload(work, copyAndVictim[0], stored -> stored[0] = 9);
        assertRefusedAfter(copyAndVictim[0], copyAndVictim[1], "dictionary");
    }

    @Test
    void aCopyWhoseDictionaryZstdRefusesIsNoDictionaryAndItsRecordsAreReportedAsCorruption() throws IOException {
        long[] copyAndVictim = logWithCopiesInSeveralSegments();
        // Its kind, id and the dictionary's magic and id stay; what follows (the entropy tables, the content) is garbage.
        CompressionTest.forgeStoredPayload(work, copyAndVictim[0], stored -> Arrays.fill(stored, 16, stored.length, (byte) 0xFF));
        assertRefusedAfter(copyAndVictim[0], copyAndVictim[1], "cannot be restored");
    }

    /**
     * A log with copies of its dictionary in several segments (so a reader from the start meets the dictionary before
     * the last copy), and one record compressed with it after the last copy, in its segment: their LSNs.
     */
    private long[] logWithCopiesInSeveralSegments() {
        try (Wal wal = Wal.open(TestLogs.small(work).compression(Compression.ZSTD).build())) {
            int n = appendUntilTrained(wal, 0);
            append(wal, n, 3000);
            List<Long> copies = controlRecords(wal);
            assertThat(copies).hasSizeGreaterThan(2);
            long copy = copies.get(copies.size() - 1);
            long victim = wal.append(CompressionTest.jsonEvent(1), Durability.LOCAL);
            assertThat(victim / TestLogs.SMALL_SEGMENT).isEqualTo(copy / TestLogs.SMALL_SEGMENT);
            return new long[] {copy, victim};
        }
    }

    /**
     * Reads the whole log from its start, so the reader has met the dictionary in earlier segments: the first record
     * compressed with it after the damaged {@code copy}, in the copy's segment, is refused as corruption, never
     * returned; the inspector reports it (and does not throw).
     */
    private void assertRefusedAfter(long copy, long victim, String why) throws IOException {
        try (Wal wal = Wal.open(TestLogs.small(work).compression(Compression.ZSTD).build());
             WalReader r = wal.reader(wal.oldestLsn())) {
            WalCorruptedException refused = null;
            try {
                while (r.next() != null) {
                    assertThat(r.position()).as("no record past the damaged copy is returned").isLessThanOrEqualTo(victim);
                }
            } catch (WalCorruptedException e) {
                refused = e;
            }
            assertThat(refused).as("a record after the damaged copy is refused").isNotNull();
            assertThat(refused.getMessage()).contains(why);
            assertThat(r.position()).as("the reader stays on the record").isGreaterThan(copy).isLessThanOrEqualTo(victim);
            assertThat(r.position() / TestLogs.SMALL_SEGMENT).isEqualTo(copy / TestLogs.SMALL_SEGMENT);
        }
        LogInspector.Result result = new LogInspector(work).inspect(new LogInspector.Visitor() {
        });
        assertThat(result.problem()).contains("cannot be restored");
        assertThat(result.problemLsn() / TestLogs.SMALL_SEGMENT).isEqualTo(copy / TestLogs.SMALL_SEGMENT);
    }

    // ------------------------------------------------------------------ helpers

    /** Waits (up to 10 s) until the log has a dictionary to compress with. */
    private static void awaitDictionary(Wal wal) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (dictionaries(wal.parts()).active() == null) {
            assertThat(System.nanoTime()).as("a dictionary within 10 s").isLessThan(deadline);
            Thread.onSpinWait();
        }
    }

    /** Appends events from {@code from} until the log has trained its dictionary; returns the next event's number. */
    static int appendUntilTrained(Wal wal, int from) {
        long deadline = System.nanoTime() + 30_000_000_000L;
        int i = from;
        while (dictionaries(wal.parts()).active() == null) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no dictionary after " + (i - from) + " zstd appends");
            }
            if (i - from < 20_000) {
                wal.append(CompressionTest.jsonEvent(i++), Durability.OFF);
            } else {
                Thread.onSpinWait(); // sampled enough: training runs in the background
            }
        }
        return i;
    }

    /** The number of {@link CompressionTest#jsonEvent}'s event. */
    private static int sequence(byte[] event) {
        String s = new String(event, StandardCharsets.UTF_8);
        int at = s.indexOf("\"sequence\":") + "\"sequence\":".length();
        return Integer.parseInt(s.substring(at, s.indexOf(',', at)));
    }

    private static void append(Wal wal, int from, int count) {
        for (int i = from; i < from + count; i++) {
            wal.append(CompressionTest.jsonEvent(i), Durability.OFF);
        }
    }

    private static long storedBytes(Wal wal, int from, int count) {
        wal.append(CompressionTest.jsonEvent(from - 1), Durability.OFF); // a copy of the dictionary, if one is due, first
        long before = wal.insertLsn();
        append(wal, from, count);
        return wal.insertLsn() - before;
    }

    private static void assertReadBack(Wal wal, int from, int count) {
        wal.flush();
        try (WalReader r = wal.reader(wal.oldestLsn())) {
            WalRecord rec;
            int seen = 0;
            while ((rec = r.next()) != null) {
                if (Arrays.equals(rec.payload(), CompressionTest.jsonEvent(from + seen))) {
                    seen++;
                }
            }
            assertThat(seen).isEqualTo(count);
        }
    }

    /** The LSNs of the log's control records (here: the copies of its dictionary), in order; flushes first. */
    private static List<Long> controlRecords(Wal wal) {
        wal.flush();
        List<Long> lsns = new ArrayList<>();
        try {
            new LogInspector(wal.directory()).inspect(new LogInspector.Visitor() {
                @Override
                public boolean onRecord(LogInspector.RecordInfo r) {
                    if (r.control()) {
                        lsns.add(r.lsn());
                    }
                    return true;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return lsns;
    }

    private static long lastControlRecord(Wal wal) {
        List<Long> lsns = controlRecords(wal);
        assertThat(lsns).isNotEmpty();
        return lsns.get(lsns.size() - 1);
    }
}
